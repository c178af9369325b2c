package protocol

import (
	"encoding/json"
	"fmt"
)

// The unions below are written by hand: schema/mcp_server_config.json and
// schema/mcp_server_input.json express them with oneOf, which the code
// generator cannot turn into Go. Each decodes by switching on "type" and
// encodes as the variant it holds.

// MCPServerConfig is one MCP server config of a Computer, discriminated by
// "type": exactly one of its fields is set (spec/protocol.md, Routed requests).
type MCPServerConfig struct {
	Stdio      *MCPStdioConfig
	Streamable *MCPStreamableConfig
	SSE        *MCPSSEConfig
}

// MCP server config types, the values of "type".
const (
	ServerTypeStdio      = "stdio"
	ServerTypeStreamable = "streamable"
	ServerTypeSSE        = "sse"
)

// Type returns the value of "type": "stdio", "streamable", "sse", or "" when
// empty.
func (c MCPServerConfig) Type() string {
	switch {
	case c.Stdio != nil:
		return ServerTypeStdio
	case c.Streamable != nil:
		return ServerTypeStreamable
	case c.SSE != nil:
		return ServerTypeSSE
	}
	return ""
}

// Base returns the fields every variant shares.
func (c MCPServerConfig) Base() MCPServerConfigBase {
	switch {
	case c.Stdio != nil:
		v := c.Stdio
		return MCPServerConfigBase{Name: v.Name, BundleID: v.BundleID, Disabled: v.Disabled, ForbiddenTools: v.ForbiddenTools, ToolMeta: v.ToolMeta, DefaultToolMeta: v.DefaultToolMeta, Vrl: v.Vrl}
	case c.Streamable != nil:
		v := c.Streamable
		return MCPServerConfigBase{Name: v.Name, BundleID: v.BundleID, Disabled: v.Disabled, ForbiddenTools: v.ForbiddenTools, ToolMeta: v.ToolMeta, DefaultToolMeta: v.DefaultToolMeta, Vrl: v.Vrl}
	case c.SSE != nil:
		v := c.SSE
		return MCPServerConfigBase{Name: v.Name, BundleID: v.BundleID, Disabled: v.Disabled, ForbiddenTools: v.ForbiddenTools, ToolMeta: v.ToolMeta, DefaultToolMeta: v.DefaultToolMeta, Vrl: v.Vrl}
	}
	return MCPServerConfigBase{}
}

// Name returns the configured server name.
func (c MCPServerConfig) Name() string { return c.Base().Name }

// UnmarshalJSON decodes the variant named by "type".
func (c *MCPServerConfig) UnmarshalJSON(b []byte) error {
	var probe struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return err
	}
	*c = MCPServerConfig{}
	switch probe.Type {
	case ServerTypeStdio:
		c.Stdio = new(MCPStdioConfig)
		return json.Unmarshal(b, c.Stdio)
	case ServerTypeStreamable:
		c.Streamable = new(MCPStreamableConfig)
		return json.Unmarshal(b, c.Streamable)
	case ServerTypeSSE:
		c.SSE = new(MCPSSEConfig)
		return json.Unmarshal(b, c.SSE)
	}
	return fmt.Errorf("mcp server config: unknown type %q (want stdio, streamable or sse)", probe.Type)
}

// MarshalJSON encodes the variant held, with its "type".
func (c MCPServerConfig) MarshalJSON() ([]byte, error) {
	switch {
	case c.Stdio != nil:
		v := *c.Stdio
		v.Type = ServerTypeStdio
		return json.Marshal(v)
	case c.Streamable != nil:
		v := *c.Streamable
		v.Type = ServerTypeStreamable
		return json.Marshal(v)
	case c.SSE != nil:
		v := *c.SSE
		v.Type = ServerTypeSSE
		return json.Marshal(v)
	}
	return nil, fmt.Errorf("mcp server config: empty union")
}

// MCPServerInput is one input of a Computer config, referenced from server
// configs as ${input:ID} and discriminated by "type": exactly one field is
// set (spec/protocol.md, Routed requests).
type MCPServerInput struct {
	PromptString *MCPPromptStringInput
	PickString   *MCPPickStringInput
	Command      *MCPCommandInput
}

// Input types, the values of "type".
const (
	InputTypePromptString = "promptString"
	InputTypePickString   = "pickString"
	InputTypeCommand      = "command"
)

// Type returns the value of "type", or "" when empty.
func (in MCPServerInput) Type() string {
	switch {
	case in.PromptString != nil:
		return InputTypePromptString
	case in.PickString != nil:
		return InputTypePickString
	case in.Command != nil:
		return InputTypeCommand
	}
	return ""
}

// ID returns the input's id.
func (in MCPServerInput) ID() string {
	switch {
	case in.PromptString != nil:
		return in.PromptString.ID
	case in.PickString != nil:
		return in.PickString.ID
	case in.Command != nil:
		return in.Command.ID
	}
	return ""
}

// UnmarshalJSON decodes the variant named by "type".
func (in *MCPServerInput) UnmarshalJSON(b []byte) error {
	var probe struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return err
	}
	*in = MCPServerInput{}
	switch probe.Type {
	case InputTypePromptString:
		in.PromptString = new(MCPPromptStringInput)
		return json.Unmarshal(b, in.PromptString)
	case InputTypePickString:
		in.PickString = new(MCPPickStringInput)
		return json.Unmarshal(b, in.PickString)
	case InputTypeCommand:
		in.Command = new(MCPCommandInput)
		return json.Unmarshal(b, in.Command)
	}
	return fmt.Errorf("mcp server input: unknown type %q (want promptString, pickString or command)", probe.Type)
}

// MarshalJSON encodes the variant held, with its "type".
func (in MCPServerInput) MarshalJSON() ([]byte, error) {
	switch {
	case in.PromptString != nil:
		v := *in.PromptString
		v.Type = InputTypePromptString
		return json.Marshal(v)
	case in.PickString != nil:
		v := *in.PickString
		v.Type = InputTypePickString
		return json.Marshal(v)
	case in.Command != nil:
		v := *in.Command
		v.Type = InputTypeCommand
		return json.Marshal(v)
	}
	return nil, fmt.Errorf("mcp server input: empty union")
}
