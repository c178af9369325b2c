"""Answer bundle_id cases with the Python reference SDK (a2c-smcp 0.4.x).

Reads {"cases": [...]} (conformance/bundle_id.json) on stdin; each case has
"config", an MCP server config as a Computer's config file holds it. Prints,
for each case in order, {"derived": ..., "resolved": ... or "error": ...,
"identity": hex of the connection-identity bytes} as the SDK computes them.
"""

import json
import sys

# The SDK's logger writes to stdout when it starts: keep stdout for the answer.
answer_to = sys.stdout
sys.stdout = sys.stderr

from a2c_smcp.computer.mcp_clients.model import (
    SseServerConfig,
    StdioServerConfig,
    StreamableHttpServerConfig,
)
from a2c_smcp.utils import bundle_id as bid

KINDS = {"stdio": StdioServerConfig, "streamable": StreamableHttpServerConfig, "sse": SseServerConfig}


def build(cfg):
    cfg = dict(cfg)
    explicit = cfg.pop("bundle_id", None)
    kind = KINDS[cfg["type"]]
    # The explicit id is checked apart, so that an invalid one still lets the
    # derivation be computed.
    return kind.model_validate(cfg), explicit


out = []
for case in json.load(sys.stdin)["cases"]:
    config, explicit = build(case["config"])
    answer = {
        "derived": bid.generate_bundle_id(config),
        "identity": bid.connection_identity_tlv(config).hex(),
    }
    if explicit is None:
        answer["resolved"] = bid.resolve_bundle_id(config)
    else:
        try:
            answer["resolved"] = bid.validate_explicit_bundle_id(explicit)
        except ValueError as e:
            answer["error"] = str(e)
    out.append(answer)
json.dump(out, answer_to, ensure_ascii=False, indent=1)
