// Command smcpgen regenerates the protocol module from schema/, the single
// source of truth of the wire:
//
//   - types_gen.go: Go types of every payload schema, by go-jsonschema
//     (models only; runtime validation is done by protocol.Validate);
//   - events_gen.go: event name constants and the event registry, from
//     schema/events.json;
//   - errors_gen.go: error code constants, names, meanings and one
//     constructor per code, from schema/errors.json;
//   - schema/*.json: a copy of every schema, embedded by the protocol
//     package (go:embed cannot reach outside its module);
//   - with -spec, events_gen.md and errors_gen.md: the event and error
//     tables of the protocol reference (spec/), from the same manifests.
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
	"regexp"
	"slices"
	"sort"
	"strings"
	"text/template"

	"github.com/atombender/go-jsonschema/pkg/generator"
)

// unionSchemas are expressed with oneOf, which go-jsonschema cannot turn into
// Go; their types are written by hand in protocol/union.go. rulesSchemas hold
// only validation rules and have no Go type of their own.
var (
	unionSchemas = []string{"mcp_server_config.json", "mcp_server_input.json"}
	rulesSchemas = []string{"dpe_content_rules.json"}
	manifests    = []string{"events.json", "errors.json"}
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("smcpgen: ")
	schemaDir := flag.String("schema", "schema", "directory holding the JSON Schemas")
	outDir := flag.String("out", "protocol", "directory of the protocol package to write into")
	specDir := flag.String("spec", "", "directory to write the spec tables (events_gen.md, errors_gen.md) into; none when empty")
	flag.Parse()
	if err := run(*schemaDir, *outDir); err != nil {
		log.Fatal(err)
	}
	if *specDir != "" {
		if err := writeSpecTables(*schemaDir, *specDir); err != nil {
			log.Fatal(err)
		}
	}
}

func run(schemaDir, outDir string) error {
	files, err := filepath.Glob(filepath.Join(schemaDir, "*.json"))
	if err != nil {
		return err
	}
	sort.Strings(files)
	if len(files) == 0 {
		return fmt.Errorf("no schemas in %s", schemaDir)
	}
	if err := os.MkdirAll(filepath.Join(outDir, "schema"), 0o755); err != nil {
		return err
	}
	if err := copySchemas(files, filepath.Join(outDir, "schema")); err != nil {
		return err
	}
	types, err := generateTypes(files)
	if err != nil {
		return err
	}
	if err := writeGo(filepath.Join(outDir, "types_gen.go"), types); err != nil {
		return err
	}
	events, err := generateEvents(filepath.Join(schemaDir, "events.json"), schemaDir)
	if err != nil {
		return err
	}
	if err := writeGo(filepath.Join(outDir, "events_gen.go"), events); err != nil {
		return err
	}
	codes, err := generateErrors(filepath.Join(schemaDir, "errors.json"))
	if err != nil {
		return err
	}
	return writeGo(filepath.Join(outDir, "errors_gen.go"), codes)
}

// copySchemas mirrors schema/ into the embed directory, removing files that
// no longer exist upstream so a deleted schema cannot linger.
func copySchemas(files []string, dst string) error {
	keep := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		keep[filepath.Base(f)] = true
		if err := os.WriteFile(filepath.Join(dst, filepath.Base(f)), b, 0o644); err != nil {
			return err
		}
	}
	old, err := filepath.Glob(filepath.Join(dst, "*.json"))
	if err != nil {
		return err
	}
	for _, f := range old {
		if !keep[filepath.Base(f)] {
			if err := os.Remove(f); err != nil {
				return err
			}
		}
	}
	return nil
}

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

func generateTypes(files []string) ([]byte, error) {
	var warnings []string
	g, err := generator.New(generator.Config{
		DefaultPackageName:        "protocol",
		DefaultOutputName:         "types_gen.go",
		StructNameFromTitle:       true,
		OnlyModels:                true,
		Tags:                      []string{"json"},
		Capitalizations:           []string{"ID", "URI", "DPE", "SMCP", "MCP", "SSE", "URL"},
		DisableCustomTypesForMaps: true,
		Warner:                    func(s string) { warnings = append(warnings, s) },
	})
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		base := filepath.Base(f)
		if slices.Contains(unionSchemas, base) || slices.Contains(rulesSchemas, base) || slices.Contains(manifests, base) {
			continue
		}
		if err := g.DoFile(f); err != nil {
			return nil, fmt.Errorf("%s: %w", base, err)
		}
	}
	sources, err := g.Sources()
	if err != nil {
		return nil, err
	}
	if len(sources) != 1 {
		return nil, fmt.Errorf("expected one generated source, got %d", len(sources))
	}
	for _, src := range sources {
		src = optionalRefType.ReplaceAll(src, []byte("$1"))
		src = emptyInterface.ReplaceAll(src, []byte("any"))
		src = openObject.ReplaceAll(src, []byte("\t// Extra holds the members the schema does not name.\n\tExtra map[string]any `json:\"-\"`"))
		return src, nil
	}
	return nil, nil
}

type eventSpec struct {
	Name           string   `json:"name"`
	Const          string   `json:"const"`
	Direction      string   `json:"direction"`
	Senders        []string `json:"senders"`
	Request        string   `json:"request"`
	Ack            string   `json:"ack"`
	AckArity       int      `json:"ack_arity"`
	AckMayBeError  bool     `json:"ack_may_be_error"`
	Broadcasts     string   `json:"broadcasts"`
	Extension      bool     `json:"extension"`
	Description    string   `json:"description"`
	BroadcastConst string   `json:"-"`
}

var directions = map[string]string{"client": "DirectionClient", "server": "DirectionServer", "notify": "DirectionNotify"}
var senderRoles = map[string]string{"agent": "SenderAgent", "computer": "SenderComputer", "server": "SenderServer"}

func generateEvents(path, schemaDir string) ([]byte, error) {
	var manifest struct {
		manifestHeader
		Namespace       string      `json:"namespace"`
		ProtocolVersion string      `json:"protocol_version"`
		Events          []eventSpec `json:"events"`
	}
	if err := readJSON(path, &manifest); err != nil {
		return nil, err
	}
	consts := map[string]string{}
	for _, e := range manifest.Events {
		if _, dup := consts[e.Name]; dup {
			return nil, fmt.Errorf("events.json: %s listed twice", e.Name)
		}
		consts[e.Name] = e.Const
	}
	for i := range manifest.Events {
		e := &manifest.Events[i]
		prefix, _, _ := strings.Cut(e.Name, ":")
		if prefix != e.Direction || directions[e.Direction] == "" {
			return nil, fmt.Errorf("events.json: %s: direction %q does not match its prefix", e.Name, e.Direction)
		}
		if (e.Ack == "") != (e.AckArity == 0) {
			return nil, fmt.Errorf("events.json: %s: ack and ack_arity disagree", e.Name)
		}
		for _, s := range []string{e.Request, e.Ack} {
			if s == "" {
				continue
			}
			if _, err := os.Stat(filepath.Join(schemaDir, s)); err != nil {
				return nil, fmt.Errorf("events.json: %s: %w", e.Name, err)
			}
		}
		for _, s := range e.Senders {
			if senderRoles[s] == "" {
				return nil, fmt.Errorf("events.json: %s: unknown sender %q", e.Name, s)
			}
		}
		if e.Broadcasts != "" {
			if e.BroadcastConst = consts[e.Broadcasts]; e.BroadcastConst == "" {
				return nil, fmt.Errorf("events.json: %s broadcasts unknown event %s", e.Name, e.Broadcasts)
			}
		}
	}
	var buf bytes.Buffer
	err := eventsTmpl.Execute(&buf, map[string]any{
		"Namespace": manifest.Namespace, "Version": manifest.ProtocolVersion, "Events": manifest.Events,
		"Directions": directions, "Senders": senderRoles,
	})
	return buf.Bytes(), err
}

var eventsTmpl = template.Must(template.New("events").Funcs(template.FuncMap{
	"senders": func(names []string) string {
		var parts []string
		for _, n := range names {
			parts = append(parts, senderRoles[n])
		}
		return strings.Join(parts, " | ")
	},
}).Parse(`// Code generated by smcpgen from schema/events.json. DO NOT EDIT.

package protocol

// Namespace is the Socket.IO namespace every SMCP event lives in.
const Namespace = {{printf "%q" .Namespace}}

// ProtocolVersion is the A2C-SMCP protocol version the schemas describe.
const ProtocolVersion = {{printf "%q" .Version}}

// Event names.
const (
{{- range .Events}}
	// {{.Const}}: {{.Description}}{{if .Extension}} (smcp-go extension){{end}}
	{{.Const}} = {{printf "%q" .Name}}
{{- end}}
)

var events = map[string]*EventInfo{
{{- range .Events}}
	{{.Const}}: {
		Name:          {{.Const}},
		Direction:     {{index $.Directions .Direction}},
		Senders:       {{senders .Senders}},
		RequestSchema: {{printf "%q" .Request}},
		AckSchema:     {{printf "%q" .Ack}},
		AckArity:      {{.AckArity}},
		AckMayBeError: {{.AckMayBeError}},
		{{- if .Broadcasts}}
		Broadcasts:    {{.BroadcastConst}},
		{{- end}}
		Extension:     {{.Extension}},
	},
{{- end}}
}

// eventOrder lists the events in manifest order.
var eventOrder = []string{
{{- range .Events}}
	{{.Const}},
{{- end}}
}
`))

type codeSpec struct {
	Code    int    `json:"code"`
	Name    string `json:"name"`
	Group   string `json:"group"`
	Meaning string `json:"meaning"`
}

func generateErrors(path string) ([]byte, error) {
	codes, err := readCodes(path)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	err = errorsTmpl.Execute(&buf, codes)
	return buf.Bytes(), err
}

func readCodes(path string) ([]codeSpec, error) {
	var manifest struct {
		manifestHeader
		Codes []codeSpec `json:"codes"`
	}
	if err := readJSON(path, &manifest); err != nil {
		return nil, err
	}
	seen := map[int]bool{}
	for _, c := range manifest.Codes {
		if seen[c.Code] {
			return nil, fmt.Errorf("errors.json: code %d listed twice", c.Code)
		}
		seen[c.Code] = true
	}
	return manifest.Codes, nil
}

var errorsTmpl = template.Must(template.New("errors").Parse(`// Code generated by smcpgen from schema/errors.json. DO NOT EDIT.

package protocol

import "fmt"

// Error codes of the protocol (spec/protocol.md, Errors).
const (
{{- range .}}
	// Code{{.Name}}: {{.Meaning}}
	Code{{.Name}} Code = {{.Code}}
{{- end}}
)

var codeInfo = map[Code]struct{ name, group, meaning string }{
{{- range .}}
	Code{{.Name}}: { {{- printf "%q" .Name}}, {{printf "%q" .Group}}, {{printf "%q" .Meaning -}} },
{{- end}}
}

// Codes lists every protocol error code in ascending order.
func Codes() []Code {
	return []Code{ {{- range $i, $c := .}}{{if $i}}, {{end}}Code{{$c.Name}}{{end -}} }
}
{{range .}}
// New{{.Name}} returns an *Error with code {{.Code}} ({{.Meaning}}).
func New{{.Name}}(format string, args ...any) *Error {
	return &Error{Code: Code{{.Name}}, Message: fmt.Sprintf(format, args...)}
}
{{end}}`))

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
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, formatted, 0o644)
}
