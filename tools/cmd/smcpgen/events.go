package main

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// eventsManifest is schema/events.json.
type eventsManifest struct {
	manifestHeader
	Namespace   string           `json:"namespace"`
	Generations []generationSpec `json:"generations"`
	Events      []eventSpec      `json:"events"`
}

// generationSpec is one generation of the wire. A wire generation has
// schemas and an event table of its own; a generation with "like" is
// served with the shapes of that wire generation, less the events and
// codes it lists as absent (0.3.0, spec/generations.md).
type generationSpec struct {
	Version       string   `json:"version"`
	Const         string   `json:"-"`
	Errors        string   `json:"errors,omitempty"`
	Handshake     bool     `json:"handshake,omitempty"`
	Like          string   `json:"like,omitempty"`
	WithoutEvents []string `json:"without_events,omitempty"`
	WithoutCodes  []int    `json:"without_codes,omitempty"`
	References    string   `json:"references"`
	Description   string   `json:"description"`
}

// eventSpec is one event. Its request, ack and ack arity hold in every
// generation that lists it under "generations", unless that generation's
// entry names other schemas.
type eventSpec struct {
	Name           string                    `json:"name"`
	Const          string                    `json:"const"`
	Direction      string                    `json:"direction"`
	Senders        []string                  `json:"senders"`
	Request        string                    `json:"request"`
	Ack            string                    `json:"ack"`
	AckArity       int                       `json:"ack_arity"`
	AckMayBeError  bool                      `json:"ack_may_be_error"`
	Broadcasts     string                    `json:"broadcasts"`
	Description    string                    `json:"description"`
	Generations    map[string]eventInGen     `json:"generations"`
	BroadcastConst string                    `json:"-"`
	In             map[string]*resolvedInGen `json:"-"`
}

// eventInGen is what a generation says of an event.
type eventInGen struct {
	Extension bool   `json:"extension,omitempty"`
	Request   string `json:"request,omitempty"`
	Ack       string `json:"ack,omitempty"`
	Note      string `json:"note,omitempty"`
}

// resolvedInGen is an event as one generation (wire or derived) has it.
type resolvedInGen struct {
	Request, Ack, AckError, Note string
	Extension                    bool
}

var (
	directions  = map[string]string{"client": "DirectionClient", "server": "DirectionServer", "notify": "DirectionNotify"}
	senderRoles = map[string]string{"agent": "SenderAgent", "computer": "SenderComputer", "server": "SenderServer"}
	errorShapes = map[string]string{"": "ErrorShapeNone", "nested": "ErrorShapeNested", "flat": "ErrorShapeFlat"}
	versionRe   = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.0$`)
)

func readEvents(path string) (*eventsManifest, error) {
	var m eventsManifest
	if err := readJSON(path, &m); err != nil {
		return nil, err
	}
	if len(m.Generations) == 0 {
		return nil, fmt.Errorf("events.json: no generations")
	}
	seen := map[string]bool{}
	for i := range m.Generations {
		g := &m.Generations[i]
		sub := versionRe.FindStringSubmatch(g.Version)
		if sub == nil {
			return nil, fmt.Errorf("events.json: generation %q is not MAJOR.MINOR.0", g.Version)
		}
		if seen[g.Version] {
			return nil, fmt.Errorf("events.json: generation %s listed twice", g.Version)
		}
		seen[g.Version] = true
		g.Const = "Gen" + sub[1] + sub[2]
		if g.Like == "" {
			if g.Errors != "nested" && g.Errors != "flat" {
				return nil, fmt.Errorf("events.json: generation %s: errors must be nested or flat", g.Version)
			}
		} else if g.Errors != "" || g.Handshake {
			return nil, fmt.Errorf("events.json: generation %s is like %s and may not set errors or handshake", g.Version, g.Like)
		}
	}
	for _, g := range m.Generations {
		if g.Like != "" {
			base := m.generation(g.Like)
			if base == nil || base.Like != "" {
				return nil, fmt.Errorf("events.json: generation %s is like %q, which is not a wire generation", g.Version, g.Like)
			}
		}
	}
	if !slices.IsSortedFunc(m.Generations, func(a, b generationSpec) int { return compareVersions(a.Version, b.Version) }) {
		return nil, fmt.Errorf("events.json: generations must be listed oldest first")
	}
	return &m, nil
}

func compareVersions(a, b string) int {
	pa, pb := versionRe.FindStringSubmatch(a), versionRe.FindStringSubmatch(b)
	for i := 1; i <= 2; i++ {
		if d := len(pa[i]) - len(pb[i]); d != 0 {
			return d
		}
		if c := strings.Compare(pa[i], pb[i]); c != 0 {
			return c
		}
	}
	return 0
}

func (m *eventsManifest) generation(v string) *generationSpec {
	for i := range m.Generations {
		if m.Generations[i].Version == v {
			return &m.Generations[i]
		}
	}
	return nil
}

// wireGenerations are the generations with schemas of their own.
func (m *eventsManifest) wireGenerations() []string {
	var out []string
	for _, g := range m.Generations {
		if g.Like == "" {
			out = append(out, g.Version)
		}
	}
	return out
}

// label names a wire generation together with the generations served like
// it: "0.4.0" is "0.3.0 and 0.4.0".
func (m *eventsManifest) label(wire string) string {
	var names []string
	for _, g := range m.Generations {
		if g.Version == wire || g.Like == wire {
			names = append(names, g.Version)
		}
	}
	if len(names) < 2 {
		return wire
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// wireOf returns the wire generation whose shapes g uses.
func (m *eventsManifest) wireOf(g string) string {
	if spec := m.generation(g); spec != nil && spec.Like != "" {
		return spec.Like
	}
	return g
}

// check validates the manifest against the projected schemas and resolves
// every event in every generation.
func (m *eventsManifest) check(p *projection) error {
	consts := map[string]string{}
	for _, e := range m.Events {
		if _, dup := consts[e.Name]; dup {
			return fmt.Errorf("events.json: %s listed twice", e.Name)
		}
		consts[e.Name] = e.Const
	}
	for i := range m.Events {
		e := &m.Events[i]
		prefix, _, _ := strings.Cut(e.Name, ":")
		if prefix != e.Direction || directions[e.Direction] == "" {
			return fmt.Errorf("events.json: %s: direction %q does not match its prefix", e.Name, e.Direction)
		}
		if (e.Ack == "") != (e.AckArity == 0) {
			return fmt.Errorf("events.json: %s: ack and ack_arity disagree", e.Name)
		}
		if e.AckMayBeError && e.AckArity != 1 {
			return fmt.Errorf("events.json: %s: only a single ack value may be an error", e.Name)
		}
		for _, s := range e.Senders {
			if senderRoles[s] == "" {
				return fmt.Errorf("events.json: %s: unknown sender %q", e.Name, s)
			}
		}
		if e.Broadcasts != "" {
			if e.BroadcastConst = consts[e.Broadcasts]; e.BroadcastConst == "" {
				return fmt.Errorf("events.json: %s broadcasts unknown event %s", e.Name, e.Broadcasts)
			}
		}
		if len(e.Generations) == 0 {
			return fmt.Errorf("events.json: %s belongs to no generation", e.Name)
		}
		e.In = map[string]*resolvedInGen{}
		for g, in := range e.Generations {
			spec := m.generation(g)
			if spec == nil || spec.Like != "" {
				return fmt.Errorf("events.json: %s: %q is not a wire generation", e.Name, g)
			}
			r := &resolvedInGen{Request: e.Request, Ack: e.Ack, Extension: in.Extension, Note: in.Note}
			if in.Request != "" {
				r.Request = in.Request
			}
			if in.Ack != "" {
				r.Ack = in.Ack
			}
			if e.AckMayBeError {
				r.AckError = spec.Errors
			}
			for _, s := range []string{r.Request, r.Ack} {
				if s != "" && !p.has(g, s) {
					return fmt.Errorf("events.json: %s in %s: schema %s does not belong to %s", e.Name, g, s, g)
				}
			}
			e.In[g] = r
		}
	}
	for _, gs := range m.Generations {
		if gs.Like == "" {
			continue
		}
		for _, name := range gs.WithoutEvents {
			if consts[name] == "" {
				return fmt.Errorf("events.json: generation %s lacks unknown event %s", gs.Version, name)
			}
		}
		for i := range m.Events {
			e := &m.Events[i]
			if r, ok := e.In[gs.Like]; ok && !slices.Contains(gs.WithoutEvents, e.Name) {
				e.In[gs.Version] = r
			}
		}
	}
	for _, e := range m.Events {
		for g := range e.In {
			if e.Broadcasts != "" {
				if _, ok := m.event(e.Broadcasts).In[g]; !ok {
					return fmt.Errorf("events.json: %s broadcasts %s, which %s lacks", e.Name, e.Broadcasts, g)
				}
			}
		}
	}
	return nil
}

func (m *eventsManifest) event(name string) *eventSpec {
	for i := range m.Events {
		if m.Events[i].Name == name {
			return &m.Events[i]
		}
	}
	return nil
}

func generateEvents(src *source) ([]byte, error) {
	m := src.events
	var b bytes.Buffer
	b.WriteString(`// Code generated by smcpgen from schema/events.json. DO NOT EDIT.

package protocol

`)
	fmt.Fprintf(&b, "// Namespace is the Socket.IO namespace every SMCP event lives in.\nconst Namespace = %q\n\n", m.Namespace)
	b.WriteString("// Event names. Which generations have an event, and its schemas in each,\n// are in the generation's event table (Generation.Lookup, spec/events_gen.md).\nconst (\n")
	for _, e := range m.Events {
		fmt.Fprintf(&b, "\t// %s: %s\n\t%s = %q\n", e.Const, e.Description, e.Const, e.Name)
	}
	b.WriteString(")\n\n")
	b.WriteString("// generationTable holds every generation of schema/events.json, oldest first.\nvar generationTable = []*generationData{\n")
	for _, g := range m.Generations {
		wire := m.generation(m.wireOf(g.Version))
		fmt.Fprintf(&b, "\t{\n\t\tgen: %s, version: %q, wire: %q,\n", g.Const, g.Version, wire.Version)
		fmt.Fprintf(&b, "\t\terrors: %s, handshake: %v,\n", errorShapes[wire.Errors], wire.Handshake)
		fmt.Fprintf(&b, "\t\treferences: %q,\n", g.References)
		if g.Like != "" {
			fmt.Fprintf(&b, "\t\tlike: %s,\n", m.generation(g.Like).Const)
		}
		if len(g.WithoutCodes) > 0 {
			var cs []string
			for _, c := range g.WithoutCodes {
				cs = append(cs, fmt.Sprint(c))
			}
			fmt.Fprintf(&b, "\t\twithoutCodes: []Code{%s},\n", strings.Join(cs, ", "))
		}
		b.WriteString("\t\tevents: []*EventInfo{\n")
		for _, e := range m.Events {
			r, ok := e.In[g.Version]
			if !ok {
				continue
			}
			fmt.Fprintf(&b, "\t\t\t{Name: %s, Direction: %s, Senders: %s,\n", e.Const, directions[e.Direction], sendersOf(e.Senders))
			fmt.Fprintf(&b, "\t\t\t\tRequestSchema: %q, AckSchema: %q, AckArity: %d,\n", r.Request, r.Ack, e.AckArity)
			fmt.Fprintf(&b, "\t\t\t\tAckMayBeError: %v, AckError: %s,", r.AckError != "", errorShapes[r.AckError])
			if e.Broadcasts != "" {
				fmt.Fprintf(&b, " Broadcasts: %s,", e.BroadcastConst)
			}
			fmt.Fprintf(&b, " Extension: %v, Generation: %s},\n", r.Extension, g.Const)
		}
		b.WriteString("\t\t},\n\t},\n")
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}

func sendersOf(names []string) string {
	var parts []string
	for _, n := range names {
		parts = append(parts, senderRoles[n])
	}
	return strings.Join(parts, " | ")
}
