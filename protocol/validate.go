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

//go:embed schema/*.json
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

// schemas compiles the embedded schemas on first use, one file (and what it
// references) at a time: a process only keeps the validators it needs. The
// Server, which validates requests only, holds a small fraction of the set.
var schemas = newSchemaSet()

type schemaSet struct {
	ready sync.Map // file name -> *jsonschema.Schema

	mu sync.Mutex // guards c: jsonschema.Compiler is not safe for concurrent use
	c  *jsonschema.Compiler
}

func newSchemaSet() *schemaSet {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(embeddedLoader{})
	return &schemaSet{c: c}
}

// isManifest tells the event and error manifests of schema/ from the
// payload schemas.
func isManifest(file string) bool { return file == "events.json" || file == "errors.json" }

// embeddedLoader keeps validation hermetic: a schema is read from the copy
// embedded in this package, and a reference to anything else is an error
// instead of a network or file access. A top-level allOf of plain object
// schemas is merged as it is read (flattenAllOf).
type embeddedLoader struct{}

func (embeddedLoader) Load(url string) (any, error) {
	name, ok := strings.CutPrefix(url, SchemaBase)
	if !ok || strings.Contains(name, "/") {
		return nil, fmt.Errorf("schema %s is not embedded in the protocol module", url)
	}
	b, err := readSchema(name)
	if err != nil {
		return nil, fmt.Errorf("schema %s is not embedded in the protocol module", url)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return flattenAllOf(doc, readSchema), nil
}

func readSchema(name string) ([]byte, error) { return schemaFS.ReadFile("schema/" + name) }

func (set *schemaSet) get(file string) (*jsonschema.Schema, error) {
	if s, ok := set.ready.Load(file); ok {
		return s.(*jsonschema.Schema), nil
	}
	set.mu.Lock()
	defer set.mu.Unlock()
	if s, ok := set.ready.Load(file); ok {
		return s.(*jsonschema.Schema), nil
	}
	if isManifest(file) {
		return nil, Errorf(CodeInternal, "no schema %s", file)
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

func schemaFor(file string) (*jsonschema.Schema, error) { return schemas.get(file) }

// SchemaFiles lists the payload schemas the package validates against.
func SchemaFiles() []string {
	names, _ := fs.Glob(schemaFS, "schema/*.json")
	out := make([]string, 0, len(names))
	for _, name := range names {
		if base := path.Base(name); !isManifest(base) {
			out = append(out, base)
		}
	}
	return out
}

// Validate checks the JSON payload raw of an event against the schema that
// schema/events.json assigns to that part of it. A payload that breaks the
// schema, or is not JSON, is a *Error with code 400 whose message lists every
// failing instance path, e.g.
//
//	client:get_finder request: /limit: must be <= 100; /computer: missing
//
// and whose details carry the event, the part and the violations. An
// unknown event is a 400 as well.
func Validate(event string, part Part, raw []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return NewBadRequest("%s %s is not valid JSON: %v", event, part, err).
			With("event", event).With("part", part.String())
	}
	return ValidateValue(event, part, v)
}

// ValidateValue is Validate for a payload already decoded into Go values
// (map[string]any, []any, string, float64 or json.Number, bool, nil), as
// Socket.IO libraries deliver them.
func ValidateValue(event string, part Part, v any) error {
	info, ok := events[event]
	if !ok {
		return NewBadRequest("unknown event %q", event).With("event", event)
	}
	file := info.RequestSchema
	if part == Ack {
		file = info.AckSchema
		if file == "" {
			return NewBadRequest("%s has no ack", event).With("event", event)
		}
		if info.AckMayBeError && isErrorShaped(v) {
			file = "error_payload.json"
		}
	}
	s, err := schemaFor(file)
	if err != nil {
		return err
	}
	err = s.Validate(v)
	if err == nil {
		return nil
	}
	return violations(err, event+" "+part.String(), map[string]any{"event": event, "part": part.String()})
}

// ValidateSchema checks raw against one schema of schema/ by file name, for
// payloads that are not event parts, such as the DPE levels an MCP server
// serves ("dpe_document.json", "dpe_page.json", ...).
func ValidateSchema(file string, raw []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return NewBadRequest("%s: not valid JSON: %v", strings.TrimSuffix(file, ".json"), err).With("schema", file)
	}
	return ValidateSchemaValue(file, v)
}

// ValidateSchemaValue is ValidateSchema for decoded values.
func ValidateSchemaValue(file string, v any) error {
	s, err := schemaFor(file)
	if err != nil {
		return err
	}
	err = s.Validate(v)
	if err == nil {
		return nil
	}
	return violations(err, strings.TrimSuffix(file, ".json"), map[string]any{"schema": file})
}

func isErrorShaped(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	_, ok = m["error"]
	return ok
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
