package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
)

// generationsKey is the member of a payload schema that says which
// generations the schema belongs to and how each one differs from the file,
// which is the tolerant superset of them all: {"0.2.0": PATCH, "0.4.0":
// PATCH}, each PATCH an RFC 7396 JSON merge patch ({} when the generation
// takes the file as it is). A schema without it belongs to every wire
// generation unchanged (spec/generations.md, One source per payload).
const generationsKey = "x-generations"

// projection holds every payload schema: the superset as written, and its
// projection onto each wire generation it belongs to.
type projection struct {
	superset map[string]map[string]any            // file -> document without x-generations
	gens     map[string]map[string]map[string]any // generation -> file -> projected document
	order    []string                             // wire generations, oldest first
}

func project(dir string, files []string, ev *eventsManifest) (*projection, error) {
	p := &projection{
		superset: map[string]map[string]any{},
		gens:     map[string]map[string]map[string]any{},
		order:    ev.wireGenerations(),
	}
	for _, g := range p.order {
		p.gens[g] = map[string]map[string]any{}
	}
	for _, file := range files {
		raw, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			return nil, err
		}
		var doc map[string]any
		if err := json.Unmarshal(raw, &doc); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if id, _ := doc["$id"].(string); !strings.HasSuffix(id, "/"+file) {
			return nil, fmt.Errorf("%s: $id %q does not name the file", file, id)
		}
		patches := map[string]json.RawMessage{}
		if x, ok := doc[generationsKey]; ok {
			b, _ := json.Marshal(x)
			if err := json.Unmarshal(b, &patches); err != nil {
				return nil, fmt.Errorf("%s: %s must map generations to merge patches: %w", file, generationsKey, err)
			}
			if len(patches) == 0 {
				return nil, fmt.Errorf("%s: %s lists no generation", file, generationsKey)
			}
			delete(doc, generationsKey)
		} else {
			for _, g := range p.order {
				patches[g] = json.RawMessage("{}")
			}
		}
		p.superset[file] = doc
		base, err := json.Marshal(doc)
		if err != nil {
			return nil, err
		}
		for g, patch := range patches {
			if !slices.Contains(p.order, g) {
				return nil, fmt.Errorf("%s: %s names %q, which is not a wire generation of schema/events.json", file, generationsKey, g)
			}
			if t := bytes.TrimSpace(patch); len(t) == 0 || t[0] != '{' {
				return nil, fmt.Errorf("%s: the %s patch must be a JSON object", file, g)
			}
			merged, err := jsonpatch.MergePatch(base, patch)
			if err != nil {
				return nil, fmt.Errorf("%s: applying the %s patch: %w", file, g, err)
			}
			var out map[string]any
			if err := json.Unmarshal(merged, &out); err != nil {
				return nil, err
			}
			if out["$id"] != doc["$id"] {
				return nil, fmt.Errorf("%s: the %s patch may not change $id", file, g)
			}
			p.gens[g][file] = out
		}
	}
	return p, nil
}

// has reports whether file belongs to generation g.
func (p *projection) has(g, file string) bool {
	_, ok := p.gens[g][file]
	return ok
}

// write mirrors the projections into dst/<generation>/, removing files and
// directories that no longer exist so nothing stale stays embedded.
func (p *projection) write(dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	old, err := os.ReadDir(dst)
	if err != nil {
		return err
	}
	for _, e := range old {
		if !slices.Contains(p.order, e.Name()) {
			if err := os.RemoveAll(filepath.Join(dst, e.Name())); err != nil {
				return err
			}
		}
	}
	for _, g := range p.order {
		dir := filepath.Join(dst, g)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		keep := map[string]bool{}
		for file, doc := range p.gens[g] {
			keep[file] = true
			b, err := marshalIndent(doc)
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, file), b, 0o644); err != nil {
				return err
			}
		}
		stale, _ := filepath.Glob(filepath.Join(dir, "*"))
		for _, f := range stale {
			if !keep[filepath.Base(f)] {
				if err := os.RemoveAll(f); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// marshalIndent encodes v indented, keeping <, > and & as they are.
func marshalIndent(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
