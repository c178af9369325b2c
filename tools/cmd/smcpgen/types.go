package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"

	"github.com/atombender/go-jsonschema/pkg/generator"
)

// Schemas without a generated Go type of their own:
//   - unionSchemas use oneOf, which go-jsonschema cannot turn into Go;
//     their types are written by hand in protocol/union.go;
//   - rulesSchemas hold only validation rules;
//   - errorSchemas are the error payload shapes, whose Go type is the
//     hand-written protocol.Error (it reads and writes both shapes).
var (
	unionSchemas = []string{"mcp_server_config.json", "mcp_server_input.json"}
	rulesSchemas = []string{"dpe_content_rules.json"}
	errorSchemas = []string{"error_payload_flat.json", "handshake_refusal.json"}
)

var (
	// go-jsonschema makes optional fields whose Go type is overridden into
	// pointers; a nil map or slice already means "absent", so drop them.
	optionalRefType = regexp.MustCompile(`\*(map\[|\[\])`)
	emptyInterface  = regexp.MustCompile(`interface\{\}`)
	// An object schema with "additionalProperties": true keeps the members
	// it does not name in Extra; its JSON methods are written by hand in
	// protocol (go-jsonschema's models-only output has none).
	openObject = regexp.MustCompile("\tAdditionalProperties any `mapstructure:\",remain\"`")
)

// generateTypes runs go-jsonschema over the superset of every payload
// schema (the files as written, without their x-generations member), then
// applies the optionality and comment rules (fields.go).
func generateTypes(src *source) ([]byte, error) {
	tmp, err := os.MkdirTemp("", "smcpgen-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	skip := slices.Concat(unionSchemas, rulesSchemas, errorSchemas)
	for _, file := range src.files {
		b, err := marshalIndent(src.schemas.superset[file])
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(tmp, file), b, 0o644); err != nil {
			return nil, err
		}
	}
	var warnings []string
	g, err := generator.New(generator.Config{
		DefaultPackageName:        "protocol",
		DefaultOutputName:         "types_gen.go",
		StructNameFromTitle:       true,
		OnlyModels:                true,
		Tags:                      []string{"json"},
		Capitalizations:           capitalizations,
		DisableCustomTypesForMaps: true,
		Warner:                    func(s string) { warnings = append(warnings, s) },
	})
	if err != nil {
		return nil, err
	}
	for _, file := range src.files {
		if slices.Contains(skip, file) {
			continue
		}
		if err := g.DoFile(filepath.Join(tmp, file)); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	}
	sources, err := g.Sources()
	if err != nil {
		return nil, err
	}
	if len(sources) != 1 {
		return nil, fmt.Errorf("expected one generated source, got %d", len(sources))
	}
	var out []byte
	for _, s := range sources {
		out = s
	}
	out = optionalRefType.ReplaceAll(out, []byte("$1"))
	out = emptyInterface.ReplaceAll(out, []byte("any"))
	out = openObject.ReplaceAll(out, []byte("\t// Extra holds the members the schema does not name.\n\tExtra map[string]any `json:\"-\"`"))
	model := buildModel(src, skip)
	return model.rewrite(out, src.events.label)
}
