"""Print what the Python reference SDK (a2c-smcp 0.4.x) answers for the
0.4 cases of conformance/generations-0.4.json, as JSON.

Reads the file's inputs on stdin and prints:
  versions:  for each case, ProtocolVersion.parse (or its error) and
             is_compatible(client, server);
  handshake: for each query string, check_a2c_version against the SDK's own
             PROTOCOL_VERSION: null (accepted) or {status, body, headers} as
             the middleware builds the HTTP answer;
  errors:    the flat error payloads the SDK builds, each as the JSON text
             python-socketio would send (compact, in the SDK's key order).
"""

import json
import sys

answer_to = sys.stdout
sys.stdout = sys.stderr

from a2c_smcp import PROTOCOL_VERSION
from a2c_smcp.computer.blob.upload import _blob_write_error
from a2c_smcp.computer.skills.sandbox import SkillSandboxError
from a2c_smcp.computer.socketio import client as cc
from a2c_smcp.server import middleware as mw
from a2c_smcp.smcp import ErrorCode, ErrorPayload, build_computer_not_found_error
from a2c_smcp.version import ProtocolVersion, is_compatible

cases = json.load(sys.stdin)
server = ProtocolVersion.parse(PROTOCOL_VERSION)


def parse(s):
    try:
        v = ProtocolVersion.parse(s)
        return {"version": str(v)}
    except ValueError as e:
        return {"error": str(e)}


versions = []
for c in cases["versions"]:
    a = {"client": parse(c["client"]), "server": parse(c["server"])}
    if "version" in a["client"] and "version" in a["server"]:
        a["compatible"] = is_compatible(ProtocolVersion.parse(c["client"]), ProtocolVersion.parse(c["server"]))
    versions.append(a)

handshake = []
for q in cases["handshake"]:
    verdict = mw.check_a2c_version(q["query"], server)
    if verdict is None:
        handshake.append(None)
        continue
    status, body = verdict
    raw, headers = mw._build_rejection(body)
    handshake.append({"status": status, "body": json.loads(raw), "headers": dict(headers)})

compact = lambda d: json.dumps(d, separators=(",", ":"), ensure_ascii=False)
errors = {
    "computer_not_found": compact(build_computer_not_found_error("calc-1")),
    "mcp_server_not_found": compact(ErrorPayload(code=int(ErrorCode.MCP_SERVER_NOT_FOUND), message="MCP Server not registered", mcp_server="fs")),
    "capability_not_supported": compact(ErrorPayload(code=int(ErrorCode.MCP_CAPABILITY_NOT_SUPPORTED), message="MCP Server does not support 'resources' capability", mcp_server="fs", capability="resources")),
    "skill_name_invalid": compact(cc._skill_name_invalid("Bad Name")),
    "skill_not_found": compact(cc._skill_not_found("mcp:fs:review")),
    "skill_resource_too_large": compact(cc._skill_resource_error(SkillSandboxError("too_large", rel_path="assets/big.bin", total_size=104857601))),
    "blob_gone": compact(cc._blob_error(reason="gone")),
    "blob_write_forbidden": compact(_blob_write_error(reason="forbidden", message="landing root not configured")),
    "version_mismatch": compact(mw._mismatch_body(ProtocolVersion.parse("0.2.0"), server)),
}
json.dump({"sdk_protocol_version": PROTOCOL_VERSION, "versions": versions, "handshake": handshake, "errors": errors}, answer_to, ensure_ascii=False, indent=1)
