// Command smcpgen regenerates the protocol module from schema/, the single
// source of truth of the wire (spec/generations.md):
//
//   - schema/<generation>/*.json under the protocol package: every payload
//     schema projected onto each generation it belongs to (the file minus
//     its "x-generations" member, merged with that generation's RFC 7396
//     merge patch), embedded by the package for per-generation validation;
//   - types_gen.go: one Go type per payload, from the tolerant superset of
//     the generations, by go-jsonschema (models only), with the optionality
//     rule and doc comments of this command applied (fields.go);
//   - events_gen.go: event name constants and each generation's event
//     table, from schema/events.json;
//   - errors_gen.go: error code constants, names, meanings, generations,
//     code-specific members and one constructor per code, from
//     schema/errors.json;
//   - with -spec, events_gen.md and errors_gen.md: the event and error
//     tables of every generation (spec/), from the same manifests.
//
// It is run by `go run mage.go generate`; `go run mage.go check` runs it into
// a temporary directory and compares.
//
// Usage:
//
//	smcpgen -schema ./schema -out ./protocol -spec ./spec
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/format"
	"log"
	"os"
	"path/filepath"
	"sort"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("smcpgen: ")
	schemaDir := flag.String("schema", "schema", "directory holding the JSON Schemas")
	outDir := flag.String("out", "protocol", "directory of the protocol package to write into")
	specDir := flag.String("spec", "", "directory to write the spec tables (events_gen.md, errors_gen.md) into; none when empty")
	flag.Parse()
	src, err := load(*schemaDir)
	if err != nil {
		log.Fatal(err)
	}
	if err := run(src, *outDir); err != nil {
		log.Fatal(err)
	}
	if *specDir != "" {
		if err := writeSpecTables(src, *specDir); err != nil {
			log.Fatal(err)
		}
	}
}

// source is everything read from schema/.
type source struct {
	dir     string
	files   []string // payload schema file names, sorted
	events  *eventsManifest
	errors  *errorsManifest
	schemas *projection
}

func load(dir string) (*source, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no schemas in %s", dir)
	}
	sort.Strings(paths)
	src := &source{dir: dir}
	for _, p := range paths {
		if base := filepath.Base(p); !isManifest(base) {
			src.files = append(src.files, base)
		}
	}
	if src.events, err = readEvents(filepath.Join(dir, "events.json")); err != nil {
		return nil, err
	}
	if src.errors, err = readErrors(filepath.Join(dir, "errors.json"), src.events); err != nil {
		return nil, err
	}
	if src.schemas, err = project(dir, src.files, src.events); err != nil {
		return nil, err
	}
	if err := src.events.check(src.schemas); err != nil {
		return nil, err
	}
	return src, nil
}

func isManifest(file string) bool { return file == "events.json" || file == "errors.json" }

func run(src *source, outDir string) error {
	if err := src.schemas.write(filepath.Join(outDir, "schema")); err != nil {
		return err
	}
	types, err := generateTypes(src)
	if err != nil {
		return err
	}
	if err := writeGo(filepath.Join(outDir, "types_gen.go"), types); err != nil {
		return err
	}
	events, err := generateEvents(src)
	if err != nil {
		return err
	}
	if err := writeGo(filepath.Join(outDir, "events_gen.go"), events); err != nil {
		return err
	}
	codes, err := generateErrors(src)
	if err != nil {
		return err
	}
	return writeGo(filepath.Join(outDir, "errors_gen.go"), codes)
}

// manifestHeader holds the keys every manifest shares; naming them lets the
// decoder refuse unknown (misspelt) keys everywhere else.
type manifestHeader struct {
	Schema      string `json:"$schema"`
	ID          string `json:"$id"`
	Title       string `json:"title"`
	Description string `json:"description"`
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func writeGo(path string, src []byte) error {
	formatted, err := format.Source(src)
	if err != nil {
		return fmt.Errorf("%s: %w\n%s", path, err, src)
	}
	return os.WriteFile(path, formatted, 0o644)
}
