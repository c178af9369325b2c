package computer

import (
	"context"

	"github.com/a2c-smcp/smcp-go/protocol"
)

// The events 0.4.0 added (https://github.com/a2c-smcp/smcp-go/blob/main/spec/generations.md#computer):
// a Computer answers each with a coded result, never silence, in the codes
// the 0.4 references answer the same situation with, so that a reference
// Agent reads them as errors (it treats a flat ack as one only for 404,
// 4006–4008 and 4014–4019). This Computer serves no MCP resources pages,
// skills or blobs yet:
//
//   - client:get_resources: 4014 when no MCP server has the bundle_id;
//     4015 (capability "resources") when the server declares no resources,
//     and when it does (the pages are not served yet);
//   - client:get_skills: an empty list, the truth for a Computer with no
//     skills installed;
//   - client:get_skill: 4014 with details.name, as for a name no skill has;
//   - client:get_blob: 4018 reason "invalid_handle": this Computer minted
//     no handle;
//   - client:put_blob: 4019 reason "forbidden", as a reference Computer
//     without a landing directory answers (0.4.0 only: a 0.3 session has no
//     such event and is answered 4106 before it gets here).

func (h handler) GetResources(_ context.Context, _ protocol.Generation, req protocol.GetResourcesReq) (protocol.GetResourcesRet, error) {
	c := h.c
	name, ok := c.serverOf(req.MCPServer)
	if !ok {
		return protocol.GetResourcesRet{}, protocol.NewMCPServerNotFound("no MCP server of computer %q has bundle_id %q", req.Computer, req.MCPServer).
			WithField("mcp_server", req.MCPServer).With("name", req.MCPServer)
	}
	msg := "MCP server %q serves no resources pages on this Computer yet"
	if m := c.Manager(); m != nil {
		if conn := m.Conn(name); conn != nil && conn.Capabilities().Resources == nil {
			msg = "MCP server %q does not declare the resources capability"
		}
	}
	return protocol.GetResourcesRet{}, protocol.NewMCPCapabilityNotSupported(msg, req.MCPServer).
		WithField("mcp_server", req.MCPServer).WithField("capability", "resources")
}

func (h handler) GetSkills(_ context.Context, _ protocol.Generation, req protocol.GetSkillsReq) (protocol.GetSkillsRet, error) {
	return protocol.GetSkillsRet{ReqID: req.ReqID, Skills: []protocol.A2CSkillRef{}}, nil
}

func (h handler) GetSkill(_ context.Context, _ protocol.Generation, req protocol.GetSkillReq) (protocol.GetSkillRet, error) {
	return protocol.GetSkillRet{}, protocol.NewMCPServerNotFound("no skill named %q is installed on this Computer", req.Name).With("name", req.Name)
}

func (h handler) GetBlob(_ context.Context, _ protocol.Generation, req protocol.GetBlobReq) (protocol.GetBlobRet, error) {
	return protocol.GetBlobRet{}, protocol.NewBlobNotAccessible("blob handle unknown: this Computer minted no blob handles").With("reason", "invalid_handle")
}

func (h handler) PutBlob(_ context.Context, _ protocol.Generation, req protocol.PutBlobReq) (protocol.PutBlobRet, error) {
	return protocol.PutBlobRet{}, protocol.NewBlobWriteFailed("this Computer accepts no uploads: it has no landing directory").With("reason", "forbidden")
}
