"""An A2C-SMCP Computer on the Python reference SDK (a2c-smcp 0.1.2, 0.3.3 or
0.4.2, whichever the interpreter has), driven by the Go interop harness
(e2e/peers_test.go).

Usage: computer.py PEER.json, with SMCP_URL, SMCP_API_KEY (sent the SDK's
default way, as auth.token), SMCP_OFFICE and SMCP_COMPUTER in the
environment. PEER.json is
`{"servers": [MCP server configs in the SDK's format], "skill_home": DIR,
"settings": FILE}`: the Computer hosts those MCP servers (real processes,
over stdio), serves the skills under skill_home (`user/<skill>/SKILL.md`) and
reads its settings (e.g. `landingRoot`, where client:put_blob writes) from the
flag-scope settings file. Everything else is the SDK's default.

Prints `{"ready":true,"tools":[…]}` once it has joined the office (or
`{"ready":false,"error":…}` and exits 1), then reads commands from standard
input, one per line — update_config, update_tool_list, update_desktop,
update_skills, leave, join — each answered with one JSON line
`{"cmd":…,"ok":…}`. Closing standard input disconnects and exits. The SDK's
log goes to standard error.
"""

import asyncio
import inspect
import json
import logging
import os
import sys
from pathlib import Path

from pydantic import TypeAdapter

from a2c_smcp.computer import Computer
from a2c_smcp.computer.mcp_clients.model import MCPServerConfig
from a2c_smcp.computer.socketio.client import SMCPComputerClient
from a2c_smcp.smcp import SMCP_NAMESPACE
from common import emit_line, join_retrying, logs_to_stderr


async def main() -> int:
    logging.basicConfig(stream=sys.stderr, level=os.environ.get("SMCP_LOG_LEVEL", "WARNING"))
    logs_to_stderr()
    peer = json.loads(Path(sys.argv[1]).read_text())
    servers = {TypeAdapter(MCPServerConfig).validate_python(s) for s in peer.get("servers", [])}
    kwargs = {}
    if peer.get("skill_home"):
        kwargs["skill_home"] = Path(peer["skill_home"])
    if peer.get("settings"):
        kwargs["flag_settings_path"] = Path(peer["settings"])
    # a2c-smcp 0.1.2 (protocol 0.2.0) has neither skills nor settings files.
    accepted = inspect.signature(Computer).parameters
    kwargs = {k: v for k, v in kwargs.items() if k in accepted}
    office = os.environ["SMCP_OFFICE"]
    timeout = int(os.environ.get("SMCP_TIMEOUT", "20"))
    computer = Computer(name=os.environ["SMCP_COMPUTER"], mcp_servers=servers, auto_connect=True, **kwargs)
    client = SMCPComputerClient(computer=computer)
    try:
        await asyncio.wait_for(computer.boot_up(), 60)
        await asyncio.wait_for(
            client.connect(
                os.environ["SMCP_URL"],
                auth={"token": os.environ.get("SMCP_API_KEY", "")},
                namespaces=[SMCP_NAMESPACE],
                wait_timeout=timeout,
            ),
            timeout + 5,
        )
        await join_retrying(lambda: asyncio.wait_for(client.join_office(office), timeout))
        tools = [t["name"] for t in await computer.aget_available_tools()]
    except Exception as e:
        emit_line({"ready": False, "error": str(e), "error_type": type(e).__name__})
        await shutdown(computer, client)
        return 1
    emit_line({"ready": True, "tools": tools})

    commands = {
        "update_config": client.emit_update_config,
        "update_tool_list": client.emit_update_tool_list,
        "update_desktop": client.emit_refresh_desktop,
        "update_skills": getattr(client, "emit_update_skills", None),
        "leave": lambda: client.leave_office(office),
        "join": lambda: client.join_office(office),
    }
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while True:
        line = await reader.readline()
        if not line:
            break
        cmd = line.decode().strip()
        if not cmd:
            continue
        fn = commands.get(cmd)
        if fn is None:
            emit_line({"cmd": cmd, "ok": False, "error": "unknown command"})
            continue
        try:
            await asyncio.wait_for(fn(), timeout)
            emit_line({"cmd": cmd, "ok": True})
        except Exception as e:
            emit_line({"cmd": cmd, "ok": False, "error": str(e), "error_type": type(e).__name__})
    await shutdown(computer, client)
    return 0


async def shutdown(computer: Computer, client: SMCPComputerClient) -> None:
    for step in (client.disconnect, computer.shutdown):
        try:
            await asyncio.wait_for(step(), 15)
        except Exception as e:
            print(f"shutdown: {step.__qualname__}: {e}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
