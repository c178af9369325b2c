package protocol_test

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/a2c-smcp/smcp-go/protocol"
)

// Validate checks a wire payload against the schema that schema/events.json
// assigns to the event, and lists every failing path in one 400.
func ExampleValidate() {
	raw := []byte(`{"agent":"bot","req_id":"r-1","limit":-5}`)
	err := protocol.Validate(protocol.EventGetFinder, protocol.Request, raw)
	fmt.Println(err)
	// Output:
	// 400 BadRequest: client:get_finder request: /: missing property 'computer'; /limit: minimum: got -5, want 0
}

// Errors travel inside acks as the flat ErrorPayload and come back as
// *protocol.Error, usable with errors.As.
func ExampleError() {
	sent := protocol.NewPageOutOfRange("page %d out of range", 12).With("page_count", 5)
	wire, _ := json.Marshal(sent)
	fmt.Println(string(wire))

	var received error
	if e, ok := protocol.DecodeErrorPayload(wire); ok {
		received = fmt.Errorf("reading page: %w", e)
	}
	var perr *protocol.Error
	if errors.As(received, &perr) && perr.Code == protocol.CodePageOutOfRange {
		fmt.Println("page count:", perr.Details["page_count"])
	}
	// Output:
	// {"error":{"code":4202,"message":"page 12 out of range","details":{"page_count":5}}}
	// page count: 5
}

// A tool's a2c_tool_meta travels as a JSON string; ToolMeta decodes it,
// keeping the keys the Computer's config added.
func ExampleSMCPTool_ToolMeta() {
	tool := protocol.SMCPTool{Name: "delete_file", Meta: map[string]any{
		protocol.MetaKeyToolMeta: `{"auto_apply":false,"tags":["fs"],"icon":"trash"}`,
	}}
	m, err := tool.ToolMeta()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("runs without asking:", m.AutoApply != nil && *m.AutoApply)
	fmt.Println("tags:", m.Tags)
	fmt.Println("icon:", m.Extra["icon"])
	// Output:
	// runs without asking: false
	// tags: [fs]
	// icon: trash
}
