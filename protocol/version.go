package protocol

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is a protocol version, MAJOR.MINOR.PATCH, as clients name it in
// the a2c_version query parameter of their handshake (spec/generations.md,
// Versions).
type Version struct {
	Major, Minor, Patch uint64
}

// ParseVersion reads MAJOR.MINOR.PATCH: exactly three parts separated by
// dots, each a decimal number that fits in 64 bits, an optional leading "+"
// and leading zeros allowed, as the Rust reference reads them ("0.04.1" is
// 0.4.1). Anything else is a *Error with code 400 whose message is the one
// the 0.4 references answer a handshake with ("Invalid a2c_version: …" is
// added by the caller that reads the query).
func ParseVersion(s string) (Version, error) {
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return Version{}, NewBadRequest("Invalid version: %s", s)
	}
	var n [3]uint64
	for i, p := range parts {
		digits := strings.TrimPrefix(p, "+")
		if digits == "" || strings.TrimLeft(digits, "0123456789") != "" {
			return Version{}, NewBadRequest("Invalid version: %s", s)
		}
		v, err := strconv.ParseUint(digits, 10, 64)
		if err != nil {
			return Version{}, NewBadRequest("Invalid version: %s", s)
		}
		n[i] = v
	}
	return Version{Major: n[0], Minor: n[1], Patch: n[2]}, nil
}

// MustParseVersion is ParseVersion for constants; it panics on an error.
func MustParseVersion(s string) Version {
	v, err := ParseVersion(s)
	if err != nil {
		panic(err)
	}
	return v
}

// String returns the canonical form, "0.4.0".
func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch) }

// Compare returns -1, 0 or +1 as v is older than, the same as, or newer
// than w.
func (v Version) Compare(w Version) int {
	for _, d := range [][2]uint64{{v.Major, w.Major}, {v.Minor, w.Minor}, {v.Patch, w.Patch}} {
		switch {
		case d[0] < d[1]:
			return -1
		case d[0] > d[1]:
			return 1
		}
	}
	return 0
}

// CompatibleWith reports whether a client of version v may talk to a
// Server of version server, by the rule of the protocol's versioning (and of
// both 0.4 references): the MAJOR versions are equal, and in 0.x the MINOR
// versions are equal too (PATCH is free), while from 1.0 on the client's
// MINOR is at most the Server's.
func (v Version) CompatibleWith(server Version) bool {
	if v.Major != server.Major {
		return false
	}
	if v.Major == 0 {
		return v.Minor == server.Minor
	}
	return v.Minor <= server.Minor
}
