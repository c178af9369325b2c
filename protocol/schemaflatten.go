package protocol

import (
	"bytes"
	"maps"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// flattenAllOf rewrites, for validation only, a schema whose top level is
// an allOf of plain object schemas into the one object schema they mean.
// Every routed request of schema/ is written that way: the fields every
// Agent request carries (agent_call_data.json) and the event's own fields.
// The validator walks each allOf branch with a validator of its own, which
// made checking a request cost about twice what the merged schema costs
// (3.4 against 1.9 µs for client:tool_call), and validation is the largest
// cost of a routed request the Server owns (docs/performance.md).
//
// The merge is exact, or not done: every branch must be a plain object
// schema — "type": "object", "properties", "required" and annotations, no
// other keyword — given inline or by a $ref to a whole embedded file that
// is itself plain; no property may be defined by two branches; and no
// property schema taken from a referenced file may use a "#" reference
// (which would then point into the wrong document). Then the value is valid
// against the result if and only if it is valid against every branch: the
// union of the properties, each checked by its own schema, and the union of
// the required names. Violations keep their instance paths and messages.
// Anything else is left as written.
func flattenAllOf(doc any, read func(file string) ([]byte, error)) any {
	top, ok := doc.(map[string]any)
	if !ok {
		return doc
	}
	branches, ok := top["allOf"].([]any)
	if !ok || !plainObject(top, "allOf") {
		return doc
	}
	out := maps.Clone(top)
	delete(out, "allOf")
	props := map[string]any{}
	if p, ok := top["properties"].(map[string]any); ok {
		maps.Copy(props, p)
	}
	var required []any
	if r, ok := top["required"].([]any); ok {
		required = append(required, r...)
	}
	for _, b := range branches {
		branch, ok := b.(map[string]any)
		if !ok {
			return doc
		}
		if ref, isRef := branch["$ref"].(string); isRef {
			if len(branch) != 1 || strings.ContainsAny(ref, "#/") {
				return doc
			}
			raw, err := read(ref)
			if err != nil {
				return doc
			}
			v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
			if err != nil {
				return doc
			}
			if branch, ok = v.(map[string]any); !ok || hasFragmentRef(branch["properties"]) {
				return doc
			}
		}
		if !plainObject(branch) {
			return doc
		}
		if p, ok := branch["properties"].(map[string]any); ok {
			for name, s := range p {
				if _, dup := props[name]; dup {
					return doc
				}
				props[name] = s
			}
		}
		if r, ok := branch["required"].([]any); ok {
			required = append(required, r...)
		}
	}
	out["type"] = "object"
	out["properties"] = props
	if len(required) > 0 {
		out["required"] = required
	}
	return out
}

// plainObject reports whether s holds nothing but "type": "object",
// "properties", "required", annotations and the keys in also.
func plainObject(s map[string]any, also ...string) bool {
	for k, v := range s {
		switch k {
		case "$schema", "$id", "$comment", "title", "description", "examples", "goJSONSchema":
		case "type":
			if v != "object" {
				return false
			}
		case "properties":
			if _, ok := v.(map[string]any); !ok {
				return false
			}
		case "required":
			if _, ok := v.([]any); !ok {
				return false
			}
		default:
			if strings.HasPrefix(k, "x-") {
				continue // an annotation of ours; validators ignore it
			}
			found := false
			for _, a := range also {
				found = found || a == k
			}
			if !found {
				return false
			}
		}
	}
	return s["type"] == "object"
}

// hasFragmentRef reports whether v holds a "$ref" that starts with "#".
func hasFragmentRef(v any) bool {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if s, ok := e.(string); ok && k == "$ref" && strings.HasPrefix(s, "#") {
				return true
			}
			if hasFragmentRef(e) {
				return true
			}
		}
	case []any:
		for _, e := range t {
			if hasFragmentRef(e) {
				return true
			}
		}
	}
	return false
}
