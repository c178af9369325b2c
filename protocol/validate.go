package protocol

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// SchemaBase is the $id prefix of every schema in schema/.
const SchemaBase = "https://a2c-smcp.github.io/smcp-go/schema/"

// schemaFS holds every payload schema projected onto each wire generation
// (schema/<generation>/<file>), as `go run mage.go generate` writes them
// (spec/generations.md, One source per payload).
//
//go:embed schema/*/*.json
var schemaFS embed.FS

// Part selects which payload of an event Validate checks.
type Part int

const (
	// Request is the event's payload as emitted.
	Request Part = iota + 1
	// Ack is the answer. For events answering two values
	// (server:join_office, server:leave_office) it is the JSON array of both.
	Ack
)

func (p Part) String() string {
	switch p {
	case Request:
		return "request"
	case Ack:
		return "ack"
	}
	return "part?"
}

// maxReportedViolations bounds the paths listed in a validation error.
const maxReportedViolations = 16

var printer = message.NewPrinter(language.English)

// schemaSets compile the embedded schemas of one wire generation on first
// use, one file (and what it references) at a time: a process only keeps
// the validators it needs. The Server, which validates requests only, holds
// a small fraction of the set.
var schemaSets = func() map[string]*schemaSet {
	out := map[string]*schemaSet{}
	for _, d := range generationTable {
		if out[d.wire] == nil {
			out[d.wire] = newSchemaSet(d.wire)
		}
	}
	return out
}()

type schemaSet struct {
	dir   string   // the wire generation, the directory under schema/
	ready sync.Map // file name -> *jsonschema.Schema

	mu sync.Mutex // guards c: jsonschema.Compiler is not safe for concurrent use
	c  *jsonschema.Compiler
}

func newSchemaSet(dir string) *schemaSet {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(embeddedLoader{dir: dir})
	return &schemaSet{dir: dir, c: c}
}

// embeddedLoader keeps validation hermetic: a schema is read from the copy
// of its wire generation embedded in this package, and a reference to
// anything else is an error instead of a network or file access. A
// top-level allOf of plain object schemas is merged as it is read
// (flattenAllOf).
type embeddedLoader struct{ dir string }

func (l embeddedLoader) Load(url string) (any, error) {
	name, ok := strings.CutPrefix(url, SchemaBase)
	if !ok || strings.Contains(name, "/") {
		return nil, fmt.Errorf("schema %s is not embedded in the protocol module", url)
	}
	b, err := l.read(name)
	if err != nil {
		return nil, fmt.Errorf("schema %s is not embedded in the protocol module", url)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return flattenAllOf(doc, l.read), nil
}

func (l embeddedLoader) read(name string) ([]byte, error) {
	if l.dir == "" || strings.ContainsAny(name, "/\\") {
		return nil, fs.ErrNotExist
	}
	return schemaFS.ReadFile("schema/" + l.dir + "/" + name)
}

func (set *schemaSet) get(file string) (*jsonschema.Schema, error) {
	if s, ok := set.ready.Load(file); ok {
		return s.(*jsonschema.Schema), nil
	}
	set.mu.Lock()
	defer set.mu.Unlock()
	if s, ok := set.ready.Load(file); ok {
		return s.(*jsonschema.Schema), nil
	}
	if _, err := fs.Stat(schemaFS, "schema/"+set.dir+"/"+file); err != nil || strings.ContainsAny(file, "/\\") {
		return nil, Errorf(CodeInternal, "no schema %s in generation %s", file, set.dir)
	}
	s, err := set.c.Compile(SchemaBase + file)
	if err != nil {
		// A file that is not embedded is refused by the loader. The schemas
		// are copied into protocol/schema by `mage generate`; a broken copy
		// is a build defect, reported here and by the package tests.
		return nil, Errorf(CodeInternal, "protocol schema %s: %v", file, err)
	}
	set.ready.Store(file, s)
	return s, nil
}

func (g Generation) schemas() *schemaSet {
	if d := g.data(); d != nil {
		return schemaSets[d.wire]
	}
	return nil
}

func (g Generation) schemaFor(file string) (*jsonschema.Schema, error) {
	set := g.schemas()
	if set == nil {
		return nil, Errorf(CodeInternal, "no schemas for %s", g)
	}
	return set.get(file)
}

func schemaFor(file string) (*jsonschema.Schema, error) { return DefaultGeneration.schemaFor(file) }

// SchemaFiles lists the payload schemas of DefaultGeneration (0.2.0).
func SchemaFiles() []string { return DefaultGeneration.SchemaFiles() }

// SchemaFiles lists the payload schemas of g.
func (g Generation) SchemaFiles() []string {
	set := g.schemas()
	if set == nil {
		return nil
	}
	names, _ := fs.Glob(schemaFS, "schema/"+set.dir+"/*.json")
	out := make([]string, 0, len(names))
	for _, name := range names {
		out = append(out, path.Base(name))
	}
	return out
}

// Validate checks the JSON payload raw of an event against the schema that
// schema/events.json assigns to that part of it in DefaultGeneration
// (0.2.0); Generation.Validate checks it in a session's generation.
func Validate(event string, part Part, raw []byte) error {
	return DefaultGeneration.Validate(event, part, raw)
}

// ValidateValue is Validate for a payload already decoded into Go values.
func ValidateValue(event string, part Part, v any) error {
	return DefaultGeneration.ValidateValue(event, part, v)
}

// Validate checks the JSON payload raw of an event against the schema that
// schema/events.json assigns to that part of it in generation g. A payload
// that breaks the schema, or is not JSON, is a *Error with code 400 whose
// message lists every failing instance path, e.g.
//
//	client:get_finder request: /limit: must be <= 100; /computer: missing
//
// and whose details carry the event, the part and the violations. An event
// g lacks is a 400 as well. An ack that may be an error is checked as the
// error payload of g's shape when it has that shape (IsErrorShaped).
func (g Generation) Validate(event string, part Part, raw []byte) error {
	v, err := decodeJSON(raw, true)
	if err != nil {
		return NewBadRequest("%s %s is not valid JSON: %v", event, part, err).
			With("event", event).With("part", part.String())
	}
	return g.ValidateValue(event, part, v)
}

// ValidateValue is Generation.Validate for a payload already decoded into
// Go values (map[string]any, []any, string, float64 or json.Number, bool,
// nil), as Socket.IO libraries deliver them.
func (g Generation) ValidateValue(event string, part Part, v any) error {
	info, ok := g.Lookup(event)
	if !ok {
		if g.Valid() && anyGenerationHas(event) {
			return NewBadRequest("event %q is not part of protocol %s", event, g).With("event", event)
		}
		return NewBadRequest("unknown event %q", event).With("event", event)
	}
	file := info.RequestSchema
	if part == Ack {
		file = info.AckSchema
		if file == "" {
			return NewBadRequest("%s has no ack", event).With("event", event)
		}
		if info.AckError != ErrorShapeNone && IsErrorShaped(info.AckError, v) {
			file = info.AckError.schemaFile()
		}
	}
	s, err := g.schemaFor(file)
	if err != nil {
		return err
	}
	err = s.Validate(v)
	if err == nil {
		return nil
	}
	return violations(err, event+" "+part.String(), map[string]any{"event": event, "part": part.String()})
}

// ValidateAnyGeneration checks a payload already decoded into Go values
// against the schema of every generation that has event, newest first, and
// accepts it when one does: what a reader that is tolerant of the
// generation it meets does (https://github.com/a2c-smcp/smcp-go/blob/main/spec/generations.md#clients-negotiation-in-practice),
// such as an Agent whose Server did not confirm the generation, or whose
// answer came from a Computer of another generation through an smcp-go
// Server. The error is the newest generation's; an event no generation has
// is a 400.
func ValidateAnyGeneration(event string, part Part, v any) error {
	gens := Generations()
	var first error
	for i := len(gens) - 1; i >= 0; i-- {
		if _, ok := gens[i].Lookup(event); !ok {
			continue
		}
		err := gens[i].ValidateValue(event, part, v)
		if err == nil {
			return nil
		}
		if first == nil {
			first = err
		}
	}
	if first == nil {
		return NewBadRequest("unknown event %q", event).With("event", event)
	}
	return first
}

func anyGenerationHas(event string) bool {
	for _, g := range Generations() {
		if _, ok := g.Lookup(event); ok {
			return true
		}
	}
	return false
}

// ValidateSchema checks raw against one schema of schema/ by file name, for
// payloads that are not event parts, such as the DPE levels an MCP server
// serves ("dpe_document.json", "dpe_page.json", ...), in DefaultGeneration
// (0.2.0).
func ValidateSchema(file string, raw []byte) error {
	return DefaultGeneration.ValidateSchema(file, raw)
}

// ValidateSchemaValue is ValidateSchema for decoded values.
func ValidateSchemaValue(file string, v any) error {
	return DefaultGeneration.ValidateSchemaValue(file, v)
}

// ValidateSchema checks raw against one schema of generation g by file
// name.
func (g Generation) ValidateSchema(file string, raw []byte) error {
	v, err := decodeJSON(raw, true)
	if err != nil {
		return NewBadRequest("%s: not valid JSON: %v", strings.TrimSuffix(file, ".json"), err).With("schema", file)
	}
	return g.ValidateSchemaValue(file, v)
}

// ValidateSchemaValue is Generation.ValidateSchema for decoded values.
func (g Generation) ValidateSchemaValue(file string, v any) error {
	s, err := g.schemaFor(file)
	if err != nil {
		return err
	}
	err = s.Validate(v)
	if err == nil {
		return nil
	}
	return violations(err, strings.TrimSuffix(file, ".json"), map[string]any{"schema": file})
}

// Violation is one failing instance path of a validation error, as listed
// in the error's details under "violations".
type Violation struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// violations turns a jsonschema error into a 400 listing each failing leaf
// once, in the order the validator found them.
func violations(err error, subject string, details map[string]any) error {
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return Errorf(CodeBadRequest, "%s: %v", subject, err)
	}
	var list []Violation
	seen := map[Violation]bool{}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		v := Violation{Path: "/" + strings.Join(e.InstanceLocation, "/"), Message: e.ErrorKind.LocalizedString(printer)}
		if !seen[v] {
			seen[v] = true
			list = append(list, v)
		}
	}
	walk(ve)
	var b strings.Builder
	b.WriteString(subject)
	b.WriteString(":")
	for i, v := range list {
		if i == maxReportedViolations {
			fmt.Fprintf(&b, " (and %d more)", len(list)-i)
			break
		}
		if i > 0 {
			b.WriteString(";")
		}
		fmt.Fprintf(&b, " %s: %s", v.Path, v.Message)
	}
	e := &Error{Code: CodeBadRequest, Message: b.String(), Details: details}
	if len(list) > maxReportedViolations {
		list = list[:maxReportedViolations]
	}
	e.Details["violations"] = list
	return e
}
