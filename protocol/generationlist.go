package protocol

import "strings"

// ParseGenerationList reads a comma-separated list of versions, each
// MAJOR.MINOR or MAJOR.MINOR.PATCH ("0.4,0.2"), into the generations they
// name, in order and without repeats: the form of the binaries'
// --protocol-versions flags (spec/generations.md, Versions and
// negotiation). An empty list, or a version of no generation smcp-go
// speaks, is a *Error with code 400.
func ParseGenerationList(list string) ([]Generation, error) {
	var out []Generation
	for _, p := range strings.Split(list, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		name := p
		if strings.Count(p, ".") == 1 {
			name += ".0"
		}
		g, err := ParseGeneration(name)
		if err != nil {
			return nil, NewBadRequest("protocol version %q: %s", p, AsError(err).Message)
		}
		dup := false
		for _, o := range out {
			dup = dup || o == g
		}
		if !dup {
			out = append(out, g)
		}
	}
	if len(out) == 0 {
		return nil, NewBadRequest("no protocol version in %q", list)
	}
	return out, nil
}

// GenerationList writes gens as ParseGenerationList reads them, MAJOR.MINOR
// each ("0.4,0.3,0.2").
func GenerationList(gens []Generation) string {
	parts := make([]string, 0, len(gens))
	for _, g := range gens {
		v := g.Version()
		parts = append(parts, v.String()[:strings.LastIndex(v.String(), ".")])
	}
	return strings.Join(parts, ",")
}
