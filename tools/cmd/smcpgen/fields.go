package main

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
)

// This file holds the two rules smcpgen applies to go-jsonschema's output.
//
// The optionality rule (spec/decisions.md, Generated types): a member the
// superset schema requires is a plain Go value. An optional member is a
// pointer only when its zero value is a value of its own, distinct from
// "absent", that a sender must be able to send:
//
//   - a member some variant requires (a text block's "text", which may be
//     ""), named in the required list of an if/then/else, oneOf or anyOf
//     branch;
//   - a number or boolean whose zero the schema allows and does not declare
//     as its default (page_index 0, isError false, auto_apply false);
//   - an object (a struct).
//
// Every other optional member is a plain value with omitempty, the zero
// value meaning absent: strings (an empty string means nothing absence does
// not), numbers whose zero the schema forbids or declares the default,
// maps and slices (nil). So the same member has the same Go type in every
// type that carries it.
//
// The doc comment rule: a field's comment is the schema's description, if
// any, followed by what the wire says of the member: its JSON name and
// type, its bounds, whether it is required, what absence reads as, and how
// the generations differ on it.

// prop is one member of an object schema.
type prop struct {
	name         string
	within       []string // wire generations that have the containing schema
	schema       map[string]any
	required     bool
	condRequired bool
	gens         map[string]genFacts // wire generation -> facts; missing: not in it
}

type genFacts struct{ required bool }

// objectModel maps Go struct names to their members by JSON name.
type objectModel struct {
	structs map[string]map[string]*prop
	enums   map[string]string // enum type name -> "Struct.member"
	order   []string
}

var capitalizations = []string{"ID", "URI", "DPE", "SMCP", "MCP", "SSE", "URL"}

// goName is go-jsonschema's identifier for a JSON name, as far as the
// structs of schema/ need it.
func goName(s string) string {
	parts := strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	var b strings.Builder
	for _, p := range parts {
		up := strings.ToUpper(p)
		if slices.Contains(capitalizations, up) {
			b.WriteString(up)
			continue
		}
		b.WriteString(strings.ToUpper(p[:1]) + p[1:])
	}
	return b.String()
}

// buildModel walks every titled payload schema of the superset and records
// its members, their optionality, and what each wire generation says of
// them.
func buildModel(src *source, skip []string) *objectModel {
	m := &objectModel{structs: map[string]map[string]*prop{}, enums: map[string]string{}}
	for _, file := range src.files {
		if slices.Contains(skip, file) {
			continue
		}
		doc := src.schemas.superset[file]
		title, _ := doc["title"].(string)
		if title == "" {
			continue
		}
		m.addObject(src, title, file, doc, nil)
	}
	return m
}

// addObject records the members of one object schema under the Go name
// structName; path locates a nested inline object inside file.
func (m *objectModel) addObject(src *source, structName, file string, node map[string]any, path []string) {
	props, required, cond := collect(src.schemas.superset, node)
	if len(props) == 0 {
		return
	}
	members := map[string]*prop{}
	var within []string
	for _, g := range src.schemas.order {
		if src.schemas.has(g, file) {
			within = append(within, g)
		}
	}
	for name, s := range props {
		p := &prop{name: name, within: within, schema: s, required: required[name], condRequired: cond[name], gens: map[string]genFacts{}}
		members[name] = p
		if child, ok := s["properties"].(map[string]any); ok && len(child) > 0 && s["$ref"] == nil {
			m.addObject(src, nestedName(s, structName+goName(name)), file, s, append(slices.Clone(path), "properties", name))
		}
		if items, ok := s["items"].(map[string]any); ok {
			if child, ok := items["properties"].(map[string]any); ok && len(child) > 0 && items["$ref"] == nil {
				m.addObject(src, nestedName(items, structName+goName(name)+"Elem"), file, items, append(slices.Clone(path), "properties", name, "items"))
			}
		}
		if _, ok := s["enum"]; ok && s["$ref"] == nil {
			m.enums[structName+goName(name)] = structName + "." + name
		}
	}
	for _, g := range src.schemas.order {
		gdoc, ok := src.schemas.gens[g][file]
		if !ok {
			continue
		}
		gnode := gdoc
		for _, step := range path {
			next, _ := gnode[step].(map[string]any)
			if next == nil {
				gnode = nil
				break
			}
			gnode = next
		}
		if gnode == nil {
			continue
		}
		gprops, greq, _ := collect(src.schemas.gens[g], gnode)
		for name := range gprops {
			if p, ok := members[name]; ok {
				p.gens[g] = genFacts{required: greq[name]}
			}
		}
	}
	m.structs[structName] = members
	m.order = append(m.order, structName)
}

// nestedName is the Go name of an inline object schema: its title, as
// go-jsonschema takes it, or the name go-jsonschema derives from where it is.
func nestedName(s map[string]any, derived string) string {
	if t, ok := s["title"].(string); ok && t != "" {
		return t
	}
	return derived
}

// collect gathers the properties, required names and conditionally
// required names of an object schema, following allOf and $ref to whole
// files of the same set.
func collect(set map[string]map[string]any, node map[string]any) (map[string]map[string]any, map[string]bool, map[string]bool) {
	props, required, cond := map[string]map[string]any{}, map[string]bool{}, map[string]bool{}
	var walk func(n map[string]any, depth int)
	names := func(v any, into map[string]bool) {
		if list, ok := v.([]any); ok {
			for _, x := range list {
				if s, ok := x.(string); ok {
					into[s] = true
				}
			}
		}
	}
	walk = func(n map[string]any, depth int) {
		if depth > 8 {
			return
		}
		if ref, ok := n["$ref"].(string); ok && !strings.Contains(ref, "#") {
			if target := set[ref]; target != nil {
				walk(target, depth+1)
			}
		}
		if p, ok := n["properties"].(map[string]any); ok {
			for k, v := range p {
				if s, ok := v.(map[string]any); ok {
					props[k] = s
				}
			}
		}
		names(n["required"], required)
		if all, ok := n["allOf"].([]any); ok {
			for _, sub := range all {
				if s, ok := sub.(map[string]any); ok {
					walk(s, depth+1)
				}
			}
		}
		for _, key := range []string{"then", "else"} {
			if s, ok := n[key].(map[string]any); ok {
				names(s["required"], cond)
			}
		}
		for _, key := range []string{"oneOf", "anyOf"} {
			if alts, ok := n[key].([]any); ok {
				for _, a := range alts {
					if s, ok := a.(map[string]any); ok {
						names(s["required"], cond)
					}
				}
			}
		}
	}
	walk(node, 0)
	for k := range required {
		delete(cond, k)
	}
	return props, required, cond
}

// jsonTypes returns the JSON types a member schema admits, null aside.
func jsonTypes(s map[string]any) (types []string, nullable bool) {
	switch t := s["type"].(type) {
	case string:
		types = []string{t}
	case []any:
		for _, x := range t {
			if str, ok := x.(string); ok {
				types = append(types, str)
			}
		}
	}
	if _, ok := s["const"].(string); ok && len(types) == 0 {
		types = []string{"string"}
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		if alts, ok := s[key].([]any); ok {
			for _, a := range alts {
				if sub, ok := a.(map[string]any); ok {
					t, _ := jsonTypes(sub)
					types = append(types, t...)
					if sub["$ref"] != nil {
						types = append(types, "object")
					}
				}
			}
		}
	}
	if s["$ref"] != nil {
		types = append(types, "object")
	}
	types = slices.DeleteFunc(types, func(t string) bool {
		if t == "null" {
			nullable = true
			return true
		}
		return false
	})
	slices.Sort(types)
	return slices.Compact(types), nullable
}

// needsPointer applies the optionality rule to an optional member.
func needsPointer(p *prop) bool {
	if p.condRequired {
		return true
	}
	types, _ := jsonTypes(p.schema)
	if len(types) != 1 {
		return true
	}
	switch types[0] {
	case "string":
		return false
	case "integer", "number", "boolean":
		if d, ok := p.schema["default"]; ok && isZero(d) {
			return false
		}
		if min, ok := p.schema["minimum"].(float64); ok && min > 0 {
			return false
		}
		if min, ok := p.schema["exclusiveMinimum"].(float64); ok && min >= 0 {
			return false
		}
		return true
	}
	return true
}

func isZero(v any) bool {
	switch t := v.(type) {
	case float64:
		return t == 0
	case bool:
		return !t
	case string:
		return t == ""
	}
	return v == nil
}

// describe says what the wire says of a member, as one or two sentences.
func describe(p *prop, goType string, label func(string) string) string {
	s := p.schema
	var b strings.Builder
	fmt.Fprintf(&b, "Wire member %q: %s", p.name, typePhrase(s))
	if bounds := boundsPhrase(s); bounds != "" {
		b.WriteString(", " + bounds)
	}
	_, nullable := jsonTypes(s)
	if nullable {
		b.WriteString("; null is accepted")
	}
	switch {
	case p.required:
		b.WriteString("; always sent")
	case p.condRequired:
		b.WriteString("; required by some variants, so nil means absent and a zero value is sent")
	case strings.HasPrefix(goType, "*"):
		b.WriteString("; optional, nil when absent")
	case strings.HasPrefix(goType, "map[") || strings.HasPrefix(goType, "[]"):
		b.WriteString("; optional, nil when absent")
	default:
		if d, ok := s["default"]; ok {
			fmt.Fprintf(&b, "; optional, default %s (the zero value means absent)", literal(d))
		} else {
			b.WriteString("; optional, the zero value means absent")
		}
	}
	b.WriteString(".")
	if g := genPhrase(p, label); g != "" {
		b.WriteString(" " + g)
	}
	return b.String()
}

func literal(v any) string {
	switch t := v.(type) {
	case string:
		return fmt.Sprintf("%q", t)
	case float64:
		if t == math.Trunc(t) {
			return fmt.Sprintf("%d", int64(t))
		}
	}
	return fmt.Sprint(v)
}

func typePhrase(s map[string]any) string {
	if ref, ok := s["$ref"].(string); ok {
		return "a " + strings.TrimSuffix(ref, ".json") + " object"
	}
	if c, ok := s["const"]; ok {
		return "always " + literal(c)
	}
	if e, ok := s["enum"].([]any); ok {
		var vals []string
		for _, v := range e {
			vals = append(vals, literal(v))
		}
		return "one of " + strings.Join(vals, ", ")
	}
	types, _ := jsonTypes(s)
	if len(types) == 0 {
		return "any JSON value"
	}
	var parts []string
	for _, t := range types {
		switch t {
		case "array":
			item := "values"
			if items, ok := s["items"].(map[string]any); ok {
				item = plural(typePhrase(items))
			}
			parts = append(parts, "an array of "+item)
		case "object":
			if ap, ok := s["additionalProperties"].(map[string]any); ok {
				parts = append(parts, "an object of "+plural(typePhrase(ap)))
			} else {
				parts = append(parts, "an object")
			}
		case "integer":
			parts = append(parts, "an integer")
		default:
			parts = append(parts, "a "+t)
		}
	}
	return strings.Join(parts, " or ")
}

func plural(phrase string) string {
	phrase = strings.TrimPrefix(strings.TrimPrefix(phrase, "a "), "an ")
	if strings.HasSuffix(phrase, " object") || !strings.Contains(phrase, " ") {
		return phrase + "s"
	}
	return phrase
}

func boundsPhrase(s map[string]any) string {
	var parts []string
	minL, hasMinL := s["minLength"].(float64)
	maxL, hasMaxL := s["maxLength"].(float64)
	switch {
	case hasMinL && hasMaxL:
		parts = append(parts, fmt.Sprintf("%d to %d characters", int(minL), int(maxL)))
	case hasMaxL:
		parts = append(parts, fmt.Sprintf("at most %d characters", int(maxL)))
	case hasMinL && minL == 1:
		parts = append(parts, "not empty")
	case hasMinL:
		parts = append(parts, fmt.Sprintf("at least %d characters", int(minL)))
	}
	minV, hasMin := s["minimum"].(float64)
	maxV, hasMax := s["maximum"].(float64)
	switch {
	case hasMin && hasMax:
		parts = append(parts, fmt.Sprintf("from %s to %s", literal(minV), literal(maxV)))
	case hasMin:
		parts = append(parts, "at least "+literal(minV))
	case hasMax:
		parts = append(parts, "at most "+literal(maxV))
	}
	if n, ok := s["maxItems"].(float64); ok {
		parts = append(parts, fmt.Sprintf("at most %d items", int(n)))
	}
	if p, ok := s["pattern"].(string); ok {
		parts = append(parts, "matching `"+p+"`")
	}
	return strings.Join(parts, ", ")
}

// genPhrase says how the generations differ on a member, or "". Only the
// generations that have the containing schema count; each wire generation
// is named with the generations served like it (label).
func genPhrase(p *prop, label func(string) string) string {
	order := p.within
	var in, req []string
	for _, g := range order {
		if f, ok := p.gens[g]; ok {
			in = append(in, g)
			if f.required {
				req = append(req, g)
			}
		}
	}
	switch {
	case len(in) == 0:
		return ""
	case len(in) < len(order):
		s := "Only in " + labels(in, label)
		switch {
		case len(req) == len(in):
			s += ", where it is required"
		case len(req) > 0:
			s += "; required in " + labels(req, label)
		}
		return s + "."
	case len(req) > 0 && len(req) < len(in):
		var opt []string
		for _, g := range in {
			if !slices.Contains(req, g) {
				opt = append(opt, g)
			}
		}
		return "Required in " + labels(req, label) + ", optional in " + labels(opt, label) + "."
	case len(req) == 0 && p.required:
		return "Optional in every generation."
	}
	return ""
}

func labels(gens []string, label func(string) string) string {
	var out []string
	for _, g := range gens {
		out = append(out, label(g))
	}
	return strings.Join(out, ", ")
}

var (
	structLine = regexp.MustCompile(`^type (\w+) struct \{$`)
	enumLine   = regexp.MustCompile(`^type (\w+) string$`)
	fieldLine  = regexp.MustCompile("^\t(\\w+) (\\S+) `json:\"([^,\"]+)([^\"]*)\"`$")
)

// rewrite applies the optionality and comment rules to go-jsonschema's
// source. It reports members it found no schema for, which would mean the
// model and the generator disagree.
func (m *objectModel) rewrite(src []byte, label func(string) string) ([]byte, error) {
	var out bytes.Buffer
	var pending []string // comment lines before the next declaration
	current := ""
	var unknown []string
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	flush := func() {
		for _, l := range pending {
			out.WriteString(l + "\n")
		}
		pending = nil
	}
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "//"):
			pending = append(pending, line)
			continue
		case structLine.MatchString(line):
			current = structLine.FindStringSubmatch(line)[1]
		case enumLine.MatchString(line):
			name := enumLine.FindStringSubmatch(line)[1]
			if where, ok := m.enums[name]; ok && len(pending) == 0 {
				struc, member, _ := strings.Cut(where, ".")
				pending = []string{fmt.Sprintf("// %s is the type of the %q member of %s; its values are the constants below.", name, member, struc)}
			}
		case line == "}":
			current = ""
		case current != "" && fieldLine.MatchString(line):
			f := fieldLine.FindStringSubmatch(line)
			field, goType, key, opts := f[1], f[2], f[3], f[4]
			if key == "-" {
				break
			}
			p := m.structs[current][key]
			if p == nil {
				unknown = append(unknown, current+"."+key)
				flush()
				out.WriteString(line + "\n")
				continue
			}
			if strings.Contains(opts, "omitempty") && strings.HasPrefix(goType, "*") && !needsPointer(p) {
				goType = goType[1:]
			}
			pending = commentFor(p, goType, label, pending)
			line = fmt.Sprintf("\t%s %s `json:\"%s%s\"`", field, goType, key, opts)
		}
		flush()
		out.WriteString(line + "\n")
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, fmt.Errorf("no schema member found for generated fields %s", strings.Join(unknown, ", "))
	}
	return out.Bytes(), sc.Err()
}

// commentFor keeps a description go-jsonschema wrote, drops its "X
// corresponds to the JSON schema field" filler, and adds the wire facts.
func commentFor(p *prop, goType string, label func(string) string, old []string) []string {
	var desc []string
	for _, l := range old {
		if strings.Contains(l, "corresponds to the JSON schema field") {
			continue
		}
		desc = append(desc, l)
	}
	facts := wrap(describe(p, goType, label), 76)
	if len(desc) > 0 {
		desc = append(desc, "\t//")
	}
	for _, l := range facts {
		desc = append(desc, "\t// "+l)
	}
	return desc
}

func wrap(s string, width int) []string {
	var lines []string
	var cur strings.Builder
	for _, w := range strings.Fields(s) {
		if cur.Len() > 0 && cur.Len()+1+len(w) > width {
			lines = append(lines, cur.String())
			cur.Reset()
		}
		if cur.Len() > 0 {
			cur.WriteByte(' ')
		}
		cur.WriteString(w)
	}
	if cur.Len() > 0 {
		lines = append(lines, cur.String())
	}
	return lines
}
