"""An A2C-SMCP Computer built on the Python reference SDK (a2c-smcp 0.1.2),
driven by the Go interop test (server/interop_test.go). It hosts the stdio
MCP server mcp_echo_server.py, joins an office on the Server under test,
prints {"ready": true} and serves client:* requests until its standard input
closes."""

import asyncio
import json
import os
import sys
from pathlib import Path

from a2c_smcp.computer import Computer
from a2c_smcp.computer.mcp_clients.model import StdioServerConfig
from a2c_smcp.computer.socketio.client import SMCPComputerClient
from a2c_smcp.smcp import SMCP_NAMESPACE


async def main() -> None:
    server = StdioServerConfig(
        name="echo",
        default_tool_meta={"auto_apply": True},
        server_parameters={
            "command": sys.executable,
            "args": [str(Path(__file__).with_name("mcp_echo_server.py"))],
            "env": None,
            "cwd": None,
            "encoding": "utf-8",
            "encoding_error_handler": "strict",
        },
    )
    computer = Computer(name=os.environ["SMCP_COMPUTER"], mcp_servers={server}, auto_connect=True)
    await computer.boot_up()
    client = SMCPComputerClient(computer=computer)
    try:
        await client.connect(
            os.environ["SMCP_URL"],
            namespaces=[SMCP_NAMESPACE],
            headers={"x-api-key": os.environ["SMCP_API_KEY"]},
            socketio_path="/socket.io",
            wait_timeout=10,
        )
        await client.join_office(os.environ["SMCP_OFFICE"])
        print(json.dumps({"ready": True}), flush=True)
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, sys.stdin.read)  # until the test closes stdin
    finally:
        await computer.shutdown()
        await client.disconnect()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except Exception as e:  # reported to the Go test
        print(json.dumps({"error": f"{type(e).__name__}: {e}"}), flush=True)
        sys.exit(1)
