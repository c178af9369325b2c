"""The Python side of `go run mage.go benchBlobs` (magefile_bench_blobs.go):
the a2c-smcp 0.4.2 Agent measuring one transfer with its own high-level
API, as benchblobs' Go Agent does with the Go SDK.

Usage: agent.py download|upload, with SMCP_URL, SMCP_API_KEY, SMCP_OFFICE,
SMCP_COMPUTER and BENCH_SIZE in the environment. download calls the tool
bench__blob (emit_tool_call drains the image's blob handle, as the SDK does
by default); upload is put_blob of BENCH_SIZE bytes into the Computer's
landing root. The bytes are those of benchblobs' generator (content) and are
checked by sha256.
Prints one JSON line {"bytes":N,"secs":S,"call_secs":C,"sha256":H} (C:
the download's tool call, until the SDK starts draining the handle) (or {"error":…} and
exits 1), then waits for standard input to close.
"""

import asyncio
import base64
import hashlib
import json
import os
import sys
import time

from a2c_smcp.agent import AsyncSMCPAgentClient, DefaultAgentAuthProvider
from a2c_smcp.smcp import JOIN_OFFICE_EVENT, SMCP_NAMESPACE


def content(size: int) -> bytes:
    """Byte i is block[i mod 1 MiB] ^ (i >> 20) mod 256, block[j] the top byte
    of j * 0x9E3779B97F4A7C15 mod 2^64 (benchblobs' content)."""
    k = 0x9E3779B97F4A7C15
    block = bytes(((j * k) & 0xFFFFFFFFFFFFFFFF) >> 56 for j in range(1 << 20))
    parts = []
    for m in range((size + (1 << 20) - 1) >> 20):
        table = bytes(x ^ (m & 0xFF) for x in range(256))
        parts.append(block.translate(table))
    return b"".join(parts)[:size]


async def main(mode: str) -> int:
    size = int(os.environ["BENCH_SIZE"])
    office = os.environ["SMCP_OFFICE"]
    pc = os.environ["SMCP_COMPUTER"]
    auth = DefaultAgentAuthProvider(agent_id="bench-agent", office_id=office, api_key=os.environ["SMCP_API_KEY"])
    client = AsyncSMCPAgentClient(auth_provider=auth)
    await asyncio.wait_for(client.connect_to_server(os.environ["SMCP_URL"], wait_timeout=30), 35)
    # The SDK's join_office sends no ack and to namespace "/" (see
    # e2e/testdata/pypeer/agent.py): the same request with its own call.
    req = {"role": "agent", "name": "bench-agent", "office_id": office}
    await client.call(JOIN_OFFICE_EVENT, req, namespace=SMCP_NAMESPACE, timeout=30)
    # The Computer joins on its own: ask for its tools until it answers.
    deadline = time.monotonic() + 120
    while True:
        try:
            await client.get_tools_from_computer(pc, timeout=5)
            break
        except Exception:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)
    call_secs = 0.0
    if mode == "download":
        # The SDK drains the handle inside emit_tool_call: note when it
        # starts, to tell the tool call from the drain.
        drain = client._resolve_tool_call_binary_sideband
        drain_started = []

        async def timed_drain(raw, computer):
            drain_started.append(time.monotonic())
            return await drain(raw, computer)

        client._resolve_tool_call_binary_sideband = timed_drain
        t0 = time.monotonic()
        res = await client.emit_tool_call(pc, "bench__blob", {}, 600)  # smcp-server allows at most 600 s
        secs = time.monotonic() - t0
        call_secs = drain_started[0] - t0 if drain_started else secs
        if len(res.content) != 1 or not getattr(res.content[0], "data", ""):
            raise RuntimeError(f"not drained: {str(res)[:300]}")
        data = base64.b64decode(res.content[0].data)
        n, got = len(data), hashlib.sha256(data).hexdigest()
    else:
        data = content(size)
        t0 = time.monotonic()
        up = await client.put_blob(pc, data, name_hint="bench.bin", timeout=600)
        secs = time.monotonic() - t0
        h = hashlib.sha256()
        n = 0
        with open(up.landing_path, "rb") as f:
            while b := f.read(1 << 20):
                n += len(b)
                h.update(b)
        got = h.hexdigest()
    print(json.dumps({"bytes": n, "secs": secs, "call_secs": call_secs, "sha256": got}), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    try:
        await asyncio.wait_for(client.disconnect(), 10)
    except Exception:
        pass
    return 0


if __name__ == "__main__":
    try:
        sys.exit(asyncio.run(main(sys.argv[1])))
    except Exception as e:
        print(json.dumps({"error": f"{type(e).__name__}: {e}"}), flush=True)
        sys.exit(1)
