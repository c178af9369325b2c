"""An A2C-SMCP Agent built on the Python reference SDK (a2c-smcp 0.1.2),
driven by the Go interop test (server/interop_test.go). It joins an office
on the Server under test, lists it, gets the tools of a Computer and calls
one, and prints the results as one JSON object on stdout."""

import asyncio
import json
import os
import sys

from a2c_smcp.agent import AsyncSMCPAgentClient, DefaultAgentAuthProvider
from a2c_smcp.smcp import JOIN_OFFICE_EVENT, SMCP_NAMESPACE


async def main() -> None:
    url = os.environ["SMCP_URL"]
    office = os.environ["SMCP_OFFICE"]
    agent = os.environ["SMCP_AGENT"]
    computer = os.environ["SMCP_COMPUTER"]
    auth = DefaultAgentAuthProvider(agent_id=agent, office_id=office, api_key=os.environ["SMCP_API_KEY"])
    client = AsyncSMCPAgentClient(auth_provider=auth)
    result: dict = {}
    await client.connect_to_server(url, wait_timeout=10)
    try:
        ok, reason = await client.call(
            JOIN_OFFICE_EVENT,
            {"role": "agent", "name": agent, "office_id": office},
            namespace=SMCP_NAMESPACE,
            timeout=10,
        )
        result["join"] = [ok, reason]
        computers = await client.get_computers_in_office(office, timeout=10)
        result["computers"] = [c["name"] for c in computers]
        tools = await client.get_tools_from_computer(computer, timeout=10)
        result["tools"] = [t["name"] for t in tools["tools"]]
        call = await client.emit_tool_call(computer, "echo", {"text": "hello from python"}, 10)
        result["call"] = call.model_dump(mode="json", by_alias=True, exclude_none=True)
    finally:
        await client.disconnect()
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    try:
        asyncio.run(asyncio.wait_for(main(), 60))
    except Exception as e:  # reported to the Go test
        print(json.dumps({"error": f"{type(e).__name__}: {e}"}), flush=True)
        sys.exit(1)
