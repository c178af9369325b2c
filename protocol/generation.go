package protocol

import "strconv"

// Generation is one generation of the SMCP wire: the events, payload shapes,
// error shape and codes that a session speaks (spec/generations.md). The
// generations are data, listed in schema/events.json and projected from
// the payload schemas by `go run mage.go generate`; a role is written once
// and asks the session's Generation what to send and what to accept.
//
// The zero Generation is no generation: its methods find nothing.
type Generation uint8

// The generations smcp-go speaks, oldest first.
const (
	// Gen02 is 0.2.0: the protocol's tag v0.2.0 with the Finder, as the
	// Python SDK 0.1.2 and the Rust SDK 0.1.15 speak it. Its clients name
	// no version; errors are nested, {"error":{…}}.
	Gen02 Generation = iota + 1
	// Gen03 is 0.3.0, as the Python SDK 0.3.3 speaks it: served with the
	// shapes of 0.4.0, without client:put_blob and code 4019.
	Gen03
	// Gen04 is 0.4.0, as the Python SDK 0.4.2 and the Rust SDK 0.4.1 speak
	// it: the version handshake, bundle ids, flat errors, result meta,
	// resources, skills and blobs.
	Gen04
)

// DefaultGeneration is the generation of a session whose handshake names no
// version: 0.2.0, which no client of which names one.
const DefaultGeneration = Gen02

// ProtocolVersion is the version of DefaultGeneration, "0.2.0": the one the
// package-level Lookup, Events, Validate and ValidateSchema describe, and
// the one this module's roles spoke alone before generations. Each
// generation has its own version (Generation.Version); Generations lists
// them.
const ProtocolVersion = "0.2.0"

// generationData is one generation's row of generationTable
// (events_gen.go).
type generationData struct {
	gen          Generation
	version      string
	wire         string // the schema projection it uses
	errors       ErrorShape
	handshake    bool
	references   string
	like         Generation
	withoutCodes []Code
	events       []*EventInfo

	index map[string]*EventInfo
	ver   Version
}

var generationByGen = func() map[Generation]*generationData {
	out := map[Generation]*generationData{}
	for _, d := range generationTable {
		d.index = map[string]*EventInfo{}
		for _, e := range d.events {
			d.index[e.Name] = e
		}
		d.ver = MustParseVersion(d.version)
		out[d.gen] = d
	}
	return out
}()

func (g Generation) data() *generationData { return generationByGen[g] }

// Generations returns every generation smcp-go speaks, oldest first.
func Generations() []Generation {
	out := make([]Generation, 0, len(generationTable))
	for _, d := range generationTable {
		out = append(out, d.gen)
	}
	return out
}

// NewestGeneration is the newest generation smcp-go speaks: what a client
// names when nothing asks it to name another.
func NewestGeneration() Generation { return generationTable[len(generationTable)-1].gen }

// Valid reports whether g is one of Generations.
func (g Generation) Valid() bool { return g.data() != nil }

// String returns the generation's version, "0.4.0".
func (g Generation) String() string {
	if d := g.data(); d != nil {
		return d.version
	}
	return "Generation(" + strconv.Itoa(int(g)) + ")"
}

// Version returns the generation's version, MAJOR.MINOR.0.
func (g Generation) Version() Version {
	if d := g.data(); d != nil {
		return d.ver
	}
	return Version{}
}

// ErrorShape is how g writes an error inside an ack: nested for 0.2.0, flat
// from 0.3.0 on.
func (g Generation) ErrorShape() ErrorShape {
	if d := g.data(); d != nil {
		return d.errors
	}
	return ErrorShapeNone
}

// Handshake reports whether g's clients name their version in the
// a2c_version query parameter of the handshake (from 0.3.0 on), and its
// Servers refuse a handshake by HTTP 400 (spec/generations.md, Negotiation).
func (g Generation) Handshake() bool {
	d := g.data()
	return d != nil && d.handshake
}

// References names the reference SDKs that speak g.
func (g Generation) References() string {
	if d := g.data(); d != nil {
		return d.references
	}
	return ""
}

// GenerationOf returns the generation a client of version v speaks: the one
// whose MAJOR.MINOR it has (any PATCH). ok is false when smcp-go speaks no
// generation of v.
func GenerationOf(v Version) (g Generation, ok bool) {
	for _, d := range generationTable {
		if d.ver.Major == v.Major && d.ver.Minor == v.Minor {
			return d.gen, true
		}
	}
	return 0, false
}

// ParseGeneration reads a version ("0.4.0", "0.4.2", "0.3.1") and returns
// its generation; a version smcp-go speaks no generation of is a *Error
// with code 400.
func ParseGeneration(s string) (Generation, error) {
	v, err := ParseVersion(s)
	if err != nil {
		return 0, err
	}
	g, ok := GenerationOf(v)
	if !ok {
		return 0, NewBadRequest("no generation of version %s: smcp-go speaks %s", v, generationList(Generations()))
	}
	return g, nil
}

func generationList(gens []Generation) string {
	s := ""
	for i, g := range gens {
		if i > 0 {
			s += ", "
		}
		s += g.String()
	}
	return s
}

// Lookup returns g's entry for an event, or false when g lacks the event.
func (g Generation) Lookup(event string) (*EventInfo, bool) {
	d := g.data()
	if d == nil {
		return nil, false
	}
	e, ok := d.index[event]
	return e, ok
}

// Events returns every event of g, in manifest order.
func (g Generation) Events() []*EventInfo {
	d := g.data()
	if d == nil {
		return nil
	}
	return append([]*EventInfo(nil), d.events...)
}

// CodeStatus says what an error code is in g: core (g's reference SDKs
// define it), an extension (smcp-go sends it in g), or absent.
func (g Generation) CodeStatus(c Code) CodeStatus {
	info, ok := codeInfo[c]
	if !ok {
		return CodeAbsent
	}
	return info.status[g]
}

// CodeStatus says what an error code is in a generation.
type CodeStatus uint8

const (
	// CodeAbsent: the generation has no such code.
	CodeAbsent CodeStatus = iota
	// CodeCore: the generation's reference SDKs define the code.
	CodeCore
	// CodeExtension: smcp-go sends the code in that generation; its
	// reference SDKs do not define it.
	CodeExtension
)

func (s CodeStatus) String() string {
	switch s {
	case CodeCore:
		return "core"
	case CodeExtension:
		return "extension"
	}
	return "absent"
}
