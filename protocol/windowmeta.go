package protocol

import "encoding/json"

// Window metadata of 0.3.0 and 0.4.0 (spec/generations.md, Windows): a
// window:// resource is a bare identifier; its layout priority is the MCP
// annotation priority, a number from 0 to 1 (higher first), and whether it
// takes the whole desktop is _meta.fullscreen. 0.2.0 wrote both in the
// URI's query (package window), which 0.4 readers ignore.

// MetaFullscreen is the member of a resource's _meta that marks a window
// that takes the whole desktop.
const MetaFullscreen = "fullscreen"

// WindowPriority reads a resource's annotations.priority as the 0.4
// references do: a number from 0 to 1; missing, not a number, or out of
// that range reads as 0.
func WindowPriority(annotations map[string]any) float64 {
	var p float64
	switch v := annotations["priority"].(type) {
	case float64:
		p = v
	case float32:
		p = float64(v)
	case int:
		p = float64(v)
	case int64:
		p = float64(v)
	case json.Number:
		f, err := v.Float64()
		if err != nil {
			return 0
		}
		p = f
	default:
		return 0
	}
	if p < 0 || p > 1 || p != p {
		return 0
	}
	return p
}

// WindowFullscreen reads a resource's _meta.fullscreen as the 0.4
// references do: true only for the JSON value true.
func WindowFullscreen(meta map[string]any) bool {
	f, _ := meta[MetaFullscreen].(bool)
	return f
}

// WindowMeta returns the annotations and _meta a 0.4 window resource
// carries for a priority (0 to 1, clamped) and fullscreen flag, with the
// audience the references expect (["assistant"]).
func WindowMeta(priority float64, fullscreen bool) (annotations, meta map[string]any) {
	if priority < 0 || priority != priority {
		priority = 0
	}
	if priority > 1 {
		priority = 1
	}
	annotations = map[string]any{"priority": priority, "audience": []any{"assistant"}}
	if fullscreen {
		meta = map[string]any{MetaFullscreen: true}
	}
	return annotations, meta
}
