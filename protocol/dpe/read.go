package dpe

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/a2c-smcp/smcp-go/protocol"
)

// Tolerant readers (spec/finder.md, Reading the levels): a level's answer
// is read as the user's spec allows, and a structural problem in one part
// of a list (an element of a page, a document of a catalog, a page of a
// page index) is reported on that part, which is kept as far as it could
// be decoded, while the rest of the answer is returned. Only an answer
// whose own fields are wrong (not a JSON object, a page without
// page_index, elements that are not a list) fails as a whole.

// Problem is a structural problem a tolerant reader found in one part of an
// answer.
type Problem struct {
	// Path is the JSON Pointer of the part in the answer ("/elements/3";
	// "" for a Level-3 element itself).
	Path string `json:"path"`
	// ElementID is the id of the element concerned, when it has one.
	ElementID string `json:"element_id,omitempty"`
	// Message says what is wrong, with the path inside the part.
	Message string `json:"message"`
}

// Catalog is a Level-0 answer as a tolerant reader returns it.
type Catalog struct {
	protocol.DPECatalog
	// Problems lists the documents with a structural problem.
	Problems []Problem `json:"problems,omitempty"`
}

// Document is a Level-1 answer as a tolerant reader returns it.
type Document struct {
	protocol.DPEDocument
	// Problems lists the page summaries with a structural problem.
	Problems []Problem `json:"problems,omitempty"`
}

// Page is a Level-2 answer as a tolerant reader returns it. A page may
// carry both its elements and a rendering (content_markdown or
// content_text).
type Page struct {
	protocol.DPEPage
	// Problems lists the elements with a structural problem.
	Problems []Problem `json:"problems,omitempty"`
}

// ElementDetail is a Level-3 answer as a tolerant reader returns it.
type ElementDetail struct {
	protocol.DPEElementDetail
	// Problems lists the structural problems of the element.
	Problems []Problem `json:"problems,omitempty"`
}

// DecodeCatalog reads a Level-0 answer (dpe_catalog.json); each document
// entry is checked on its own against dpe_document_meta.json.
func DecodeCatalog(raw []byte) (*Catalog, error) {
	var out Catalog
	probs, err := decodeLevel(raw, "dpe_catalog.json", "documents", "dpe_document_meta.json", &out.DPECatalog,
		func(items []json.RawMessage, bad map[int]string) {
			out.Documents = make([]protocol.DPEDocumentMeta, len(items))
			for i, it := range items {
				out.Documents[i] = decodeItem[protocol.DPEDocumentMeta](it, bad[i] != "")
			}
		})
	out.Problems = probs
	return &out, err
}

// DecodeDocument reads a Level-1 answer (dpe_document.json); each page
// summary is checked on its own against dpe_page_summary.json.
func DecodeDocument(raw []byte) (*Document, error) {
	var out Document
	probs, err := decodeLevel(raw, "dpe_document.json", "pages", "dpe_page_summary.json", &out.DPEDocument,
		func(items []json.RawMessage, bad map[int]string) {
			out.Pages = make([]protocol.DPEPageSummary, len(items))
			for i, it := range items {
				out.Pages[i] = decodeItem[protocol.DPEPageSummary](it, bad[i] != "")
			}
		})
	out.Problems = probs
	return &out, err
}

// DecodePage reads a Level-2 answer (dpe_page.json); each element is
// checked on its own against dpe_element.json and its content decoded as
// ContentOf does.
func DecodePage(raw []byte) (*Page, error) {
	var out Page
	probs, err := decodeLevel(raw, "dpe_page.json", "elements", "dpe_element.json", &out.DPEPage,
		func(items []json.RawMessage, bad map[int]string) {
			out.Elements = make([]protocol.DPEElement, len(items))
			for i, it := range items {
				out.Elements[i] = decodeItem[protocol.DPEElement](it, bad[i] != "")
			}
		})
	if err != nil {
		return nil, err
	}
	for i := range out.Elements {
		if _, bad := probsAt(probs, i); bad {
			continue
		}
		if p, ok := contentProblem(out.Elements[i]); ok {
			probs = append(probs, Problem{Path: "/elements/" + strconv.Itoa(i), Message: p})
		}
	}
	for i := range probs {
		if n, err := strconv.Atoi(strings.TrimPrefix(probs[i].Path, "/elements/")); err == nil && n < len(out.Elements) {
			probs[i].ElementID = out.Elements[n].ElementID
		}
	}
	sortProblems(probs)
	out.Problems = probs
	return &out, nil
}

// DecodeElementDetail reads a Level-3 answer (dpe_element_detail.json). The
// answer is one element: its structural problems are reported on it, and it
// is returned as far as it could be decoded; only an answer that is not a
// JSON object fails.
func DecodeElementDetail(raw []byte) (*ElementDetail, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, notObject("dpe_element_detail.json", err)
	}
	var out ElementDetail
	var problem string
	if err := protocol.ValidateSchema("dpe_element_detail.json", raw); err != nil {
		problem = violationText(err)
	}
	out.DPEElementDetail = decodeItem[protocol.DPEElementDetail](raw, problem != "")
	if problem == "" {
		el := protocol.DPEElement{ElementID: out.ElementID, Category: out.Category, Content: out.Content}
		problem, _ = contentProblem(el)
	}
	if problem != "" {
		out.Problems = []Problem{{Path: "", ElementID: out.ElementID, Message: problem}}
	}
	return &out, nil
}

// decodeLevel validates raw against schema with the list under key
// emptied, validates each item of that list against itemSchema, decodes
// the rest into dst and hands the items (and which are bad) to items.
func decodeLevel(raw []byte, schema, key, itemSchema string, dst any, items func([]json.RawMessage, map[int]string)) ([]Problem, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, notObject(schema, err)
	}
	list, present := obj[key]
	var elems []json.RawMessage
	if present && !bytes.Equal(bytes.TrimSpace(list), []byte("null")) {
		if err := json.Unmarshal(list, &elems); err != nil {
			return nil, protocol.NewBadRequest("%s: /%s: want a list", strings.TrimSuffix(schema, ".json"), key).With("schema", schema)
		}
	}
	if present {
		obj[key] = json.RawMessage("[]")
	}
	envelope, err := json.Marshal(obj)
	if err != nil {
		return nil, protocol.NewBadRequest("%s: %v", strings.TrimSuffix(schema, ".json"), err)
	}
	if err := protocol.ValidateSchema(schema, envelope); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(envelope, dst); err != nil {
		return nil, protocol.NewBadRequest("%s: %v", strings.TrimSuffix(schema, ".json"), err).With("schema", schema)
	}
	bad := map[int]string{}
	var probs []Problem
	for i, it := range elems {
		if err := protocol.ValidateSchema(itemSchema, it); err != nil {
			msg := violationText(err)
			bad[i] = msg
			probs = append(probs, Problem{Path: "/" + key + "/" + strconv.Itoa(i), Message: msg})
		}
	}
	if present {
		items(elems, bad)
	}
	return probs, nil
}

func notObject(schema string, err error) error {
	name := strings.TrimSuffix(schema, ".json")
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) {
		return protocol.NewBadRequest("%s: not valid JSON: %v", name, err).With("schema", schema)
	}
	return protocol.NewBadRequest("%s: not a JSON object", name).With("schema", schema)
}

// violationText lists the violations of a schema error, their paths
// relative to the part checked.
func violationText(err error) string {
	pe := protocol.AsError(err)
	if vs, ok := pe.Details["violations"].([]protocol.Violation); ok && len(vs) > 0 {
		parts := make([]string, len(vs))
		for i, v := range vs {
			parts[i] = v.Path + ": " + v.Message
		}
		return strings.Join(parts, "; ")
	}
	return pe.Message
}

// decodeItem decodes one part of an answer. A part that broke its schema
// is decoded field by field: each field that does not decode into T is
// left out (at its zero value), the others are kept.
func decodeItem[T any](raw json.RawMessage, lenient bool) T {
	var out T
	if !lenient {
		if json.Unmarshal(raw, &out) == nil {
			return out
		}
		out = *new(T)
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return out
	}
	for k, v := range fields {
		one, err := json.Marshal(map[string]json.RawMessage{k: v})
		if err != nil {
			continue
		}
		var probe T
		if json.Unmarshal(one, &probe) != nil {
			delete(fields, k)
		}
	}
	kept, err := json.Marshal(fields)
	if err == nil {
		_ = json.Unmarshal(kept, &out)
	}
	return out
}

// contentProblem reports a structural problem of an element's content (as
// ContentOf finds it); ok is false when there is none.
func contentProblem(e protocol.DPEElement) (string, bool) {
	if shapeOf(e.Category) == "" {
		return "", false
	}
	if _, err := decodeContent(e.Category, e.Content); err != nil {
		return protocol.AsError(err).Message, true
	}
	return "", false
}

func probsAt(probs []Problem, i int) (Problem, bool) {
	path := "/elements/" + strconv.Itoa(i)
	for _, p := range probs {
		if p.Path == path {
			return p, true
		}
	}
	return Problem{}, false
}

// sortProblems orders problems by the index in their path.
func sortProblems(probs []Problem) {
	index := func(p Problem) int {
		i := strings.LastIndexByte(p.Path, '/')
		n, _ := strconv.Atoi(p.Path[i+1:])
		return n
	}
	for i := 1; i < len(probs); i++ {
		for j := i; j > 0 && index(probs[j]) < index(probs[j-1]); j-- {
			probs[j], probs[j-1] = probs[j-1], probs[j]
		}
	}
}

// String is "path: message" (with the element id when there is one).
func (p Problem) String() string {
	if p.ElementID != "" {
		return fmt.Sprintf("%s (element %s): %s", p.Path, p.ElementID, p.Message)
	}
	return p.Path + ": " + p.Message
}
