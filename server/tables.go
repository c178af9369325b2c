package server

// A Go map keeps the memory of the most entries it ever held: after 1,000
// sessions have come and gone, the Server's session and name tables still
// hold ~100 KB of empty slots. Each table counts its peak, and once it holds
// a quarter or less of it, it is rebuilt at its size; the copies cost at
// most one entry copied per entry deleted (spec/decisions.md, Idle memory
// per connection).

// peak is the most entries a table has held since it was last rebuilt.
type peak int

// minShrinkPeak is the smallest peak worth a rebuild.
const minShrinkPeak = 256

// grew records a table's size after an insert.
func (p *peak) grew(n int) {
	if n > int(*p) {
		*p = peak(n)
	}
}

// shrunk returns m, or m rebuilt at its size when it has come down to a
// quarter of its peak (of at least minShrinkPeak entries). It is called
// after a delete.
func shrunk[K comparable, V any](m map[K]V, p *peak) map[K]V {
	if int(*p) < minShrinkPeak || len(m) > int(*p)/4 {
		return m
	}
	out := make(map[K]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	*p = peak(len(m))
	return out
}
