package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// PickStringOption is one choice of a pickString input
// (schema/mcp_pick_string_input.json): Label is shown, Value is injected.
// 0.2.0 writes a choice as its value alone, "fast"; 0.3.0 and 0.4.0 write
// {"label":"Fast","value":"fast"} and the 0.4 Python reference refuses the
// bare form. An option reads both forms and writes the form it was read in;
// MCPPickStringInput.In converts a whole input to a generation's form.
type PickStringOption struct {
	Label string
	Value string
	// bare: written as the value alone (0.2.0).
	bare bool
}

// BareOption returns the 0.2.0 form of a choice, its value alone (shown as
// its own label).
func BareOption(value string) PickStringOption {
	return PickStringOption{Label: value, Value: value, bare: true}
}

// Bare reports whether o is written as its value alone (the 0.2.0 form).
func (o PickStringOption) Bare() bool { return o.bare }

// MarshalJSON writes the value alone for a bare option, else
// {"label","value"}.
func (o PickStringOption) MarshalJSON() ([]byte, error) {
	if o.bare {
		return json.Marshal(o.Value)
	}
	return json.Marshal(struct {
		Label string `json:"label"`
		Value string `json:"value"`
	}{o.Label, o.Value})
}

// UnmarshalJSON reads either form.
func (o *PickStringOption) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*o = BareOption(s)
		return nil
	}
	var obj struct {
		Label *string `json:"label"`
		Value *string `json:"value"`
	}
	if err := json.Unmarshal(b, &obj); err != nil {
		return fmt.Errorf("pickString option: want a string or {label, value}: %w", err)
	}
	if obj.Value == nil {
		return fmt.Errorf("pickString option: no value")
	}
	*o = PickStringOption{Value: *obj.Value, Label: *obj.Value}
	if obj.Label != nil {
		o.Label = *obj.Label
	}
	return nil
}

// In returns a copy of the input whose options are written in generation
// g's form: bare values in 0.2.0 (a label is lost there), {label, value}
// from 0.3.0 on.
func (in MCPPickStringInput) In(g Generation) MCPPickStringInput {
	out := in
	out.Options = make([]PickStringOption, len(in.Options))
	for i, o := range in.Options {
		if g.ErrorShape() == ErrorShapeNested {
			out.Options[i] = BareOption(o.Value)
		} else {
			out.Options[i] = PickStringOption{Label: o.Label, Value: o.Value}
		}
	}
	return out
}
