"""An Agent on the Python reference SDK (a2c-smcp 0.1.2) meeting a Computer
that has just started, driven by e2e/python_agent_test.go. It joins the
office and reports, one JSON object a line on stdout, what it sees: the
Computer entering, every tools answer it gets (the one its SDK fetches when
a Computer enters, and the one it fetches itself when notify:update_tool_list
arrives, a notification the SDK leaves to the application), and the tools
its event handler receives. It leaves when its stdin closes."""

import asyncio
import json
import os
import sys

from a2c_smcp.agent import AsyncSMCPAgentClient, DefaultAgentAuthProvider
from a2c_smcp.smcp import JOIN_OFFICE_EVENT, SMCP_NAMESPACE, UPDATE_TOOL_LIST_NOTIFICATION


def report(**kv) -> None:
    print(json.dumps(kv), flush=True)


class Handler:
    """The SDK's AsyncAgentEventHandler."""

    async def on_computer_enter_office(self, data, client) -> None:
        report(event="enter", computer=data.get("computer"))

    async def on_computer_leave_office(self, data, client) -> None:
        pass

    async def on_computer_update_config(self, data, client) -> None:
        pass

    async def on_tools_received(self, computer, tools, client) -> None:
        report(event="tools_received", computer=computer, tools=[t["name"] for t in tools])


class Agent(AsyncSMCPAgentClient):
    async def get_tools_from_computer(self, computer, timeout=20):
        try:
            ret = await super().get_tools_from_computer(computer, timeout)
        except Exception as e:
            report(event="tools_error", computer=computer, error=f"{type(e).__name__}: {e}")
            raise
        tools = ret.get("tools")
        report(event="tools", computer=computer, tools=None if tools is None else [t["name"] for t in tools])
        return ret


async def main() -> None:
    office = os.environ["SMCP_OFFICE"]
    name = os.environ["SMCP_AGENT"]
    auth = DefaultAgentAuthProvider(agent_id=name, office_id=office, api_key=os.environ["SMCP_API_KEY"])
    client = Agent(auth_provider=auth, event_handler=Handler())

    async def on_tool_list(data) -> None:
        report(event="update_tool_list", computer=data.get("computer"))
        ret = await client.get_tools_from_computer(data["computer"])
        await client.process_tools_response(ret, data["computer"])

    client.on(UPDATE_TOOL_LIST_NOTIFICATION, on_tool_list, namespace=SMCP_NAMESPACE)
    await client.connect_to_server(os.environ["SMCP_URL"], wait_timeout=10)
    try:
        ok, reason = await client.call(
            JOIN_OFFICE_EVENT, {"role": "agent", "name": name, "office_id": office}, namespace=SMCP_NAMESPACE, timeout=10
        )
        report(event="joined", ok=ok, reason=reason)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    finally:
        await client.disconnect()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except Exception as e:  # reported to the Go test
        report(event="error", error=f"{type(e).__name__}: {e}")
        sys.exit(1)
