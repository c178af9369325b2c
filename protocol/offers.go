package protocol

import "slices"

// Offers reports whether the Computer a server:list_room entry describes
// answers the client:* event (https://github.com/a2c-smcp/smcp-go/blob/main/spec/generations.md#confirmation-and-extensions,
// Extensions a Computer offers): a core event of its generation (its
// a2c_version; 0.2.0 when absent), or an extension it declared in
// extensions. A 0.2.0 Computer that declared nothing answers every event
// of 0.2.0, its extensions included, as the Server routes them. An entry
// that is not a Computer offers nothing.
func Offers(s SessionInfo, event string) bool {
	if s.Role != RoleComputer {
		return false
	}
	g := Gen02
	if s.A2CVersion != "" {
		var err error
		if g, err = ParseGeneration(s.A2CVersion); err != nil {
			return slices.Contains(s.Extensions, event)
		}
	}
	return g.Answers(event, s.Extensions)
}

// Answers reports whether a Computer of generation g that declared
// extensions when it joined answers the client:* event
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/generations.md#confirmation-and-extensions):
// a core event of g, or one of extensions. A 0.2.0 Computer that declared
// nothing (extensions nil) answers every event of 0.2.0, its extensions
// included, as every smcp-go Computer did before Computers declared them.
// It is the rule the Server routes by and Offers reads a room listing by.
func (g Generation) Answers(event string, extensions []string) bool {
	info, ok := g.Lookup(event)
	switch {
	case ok && !info.Extension:
		return true
	case slices.Contains(extensions, event):
		return true
	}
	return ok && extensions == nil && g == Gen02
}

// OffersFinder reports whether a Computer offers the Finder: the catalog
// (client:get_finder) and reads through it (client:read_resource)
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/finder.md). The
// reference 0.4 Computers do not.
func OffersFinder(s SessionInfo) bool {
	return Offers(s, EventGetFinder) && Offers(s, EventReadResource)
}
