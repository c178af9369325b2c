"""A scripted A2C-SMCP Agent on the Python reference SDK (a2c-smcp 0.1.2, 0.3.3
or 0.4.2, whichever the interpreter has), driven by the Go interop harness
(e2e/peers_test.go).

Configuration comes from the environment: SMCP_URL, SMCP_API_KEY (sent the
SDK's default way, as auth.token), SMCP_OFFICE, SMCP_AGENT and SMCP_TIMEOUT
(seconds, the SDK's own per-request timeout; default 20).

Standard input carries one JSON step per line, e.g.
`{"op":"tool_call","computer":"c1","tool":"tools__echo","params":{"text":"hi"}}`;
standard output carries one JSON line per step, `{"op":…,"ok":true,"result":…}`
or `{"op":…,"ok":false,"error":…,"error_type":…}` (with "payload", the
Computer's ErrorPayload, for a protocol refusal, and "reason" for a refused
upload), and one line per notification the SDK hands to its event handler, `{"notify":…,…}`. A step
with an "id" runs in the background and its answer carries the same "id", so
that a later step (a cancel) can run while it is in flight. Every step has a
deadline (`deadline_ms`, default 60 s): an SDK call that never returns is
answered `{"ok":false,"hung":true}` instead of hanging the test. The first
line is the connection's outcome, `{"op":"connect",…}`.

Each op is the SDK's own API; where the SDK cannot do what the matrix needs,
the driver says so here:
- join: the SDK's join_office emits without an ack and, unless given a
  namespace, to the namespace "/" (a defect of 0.3.3/0.4.2: the Server never
  sees the join). The driver sends the same EnterOfficeReq with the SDK's own
  `call` on the SDK's namespace, so the test reads the Server's ack.
  The Rust Server can drop the first event after CONNECT (it registers its
  handlers after an async auth step), so a join that gets no answer within
  the step's timeout is sent again, at most 3 times in all.
- cancel: emit_tool_call does not reveal the req_id it makes, so the driver
  records it when the SDK builds the request (create_tool_call_request) and
  sends `server:tool_call_cancel` with it, as the SDK itself does on a
  timeout.
- raw_call: the SDK's `call` with any event and payload (to read an answer
  the SDK's typed methods reshape, e.g. every session of list_room).
"""

import asyncio
import base64
import json
import os
import sys
import traceback
from typing import Any

from a2c_smcp.agent import AsyncSMCPAgentClient, DefaultAgentAuthProvider
from a2c_smcp.smcp import CANCEL_TOOL_CALL_EVENT, JOIN_OFFICE_EVENT, LEAVE_OFFICE_EVENT, SMCP_NAMESPACE
from common import emit_line, join_retrying, logs_to_stderr, plain


class Printer:
    """The SDK's AsyncAgentEventHandler: prints each notification."""

    async def on_computer_enter_office(self, data, client) -> None:
        emit_line({"notify": "enter_office", "data": plain(data)})

    async def on_computer_leave_office(self, data, client) -> None:
        emit_line({"notify": "leave_office", "data": plain(data)})

    async def on_computer_update_config(self, data, client) -> None:
        emit_line({"notify": "update_config", "data": plain(data)})

    async def on_computer_update_tool_list(self, data, client) -> None:
        emit_line({"notify": "update_tool_list", "data": plain(data)})

    async def on_tools_received(self, computer, tools, client) -> None:
        emit_line({"notify": "tools", "computer": computer, "tools": [t["name"] for t in tools]})

    async def on_skills_received(self, computer, skills, client) -> None:
        emit_line({"notify": "skills", "computer": computer, "skills": [s["name"] for s in skills]})

    async def on_desktop_updated(self, computer, desktops, client) -> None:
        emit_line({"notify": "desktop", "computer": computer, "desktops": plain(desktops)})


class Peer:
    def __init__(self, client: AsyncSMCPAgentClient, office: str, name: str, timeout: int) -> None:
        self.client = client
        self.office = office
        self.name = name
        self.timeout = timeout
        self.req_ids: dict[str, str] = {}  # step id of a tool_call → the req_id the SDK made
        self._building: str | None = None
        build = client.create_tool_call_request

        def recording_build(computer: str, tool_name: str, params: dict, timeout: int):
            req = build(computer, tool_name, params, timeout)
            if self._building is not None:
                self.req_ids[self._building] = req["req_id"]
                self._building = None
            return req

        client.create_tool_call_request = recording_build  # type: ignore[method-assign]

    async def step(self, s: dict) -> Any:
        c = self.client
        op = s["op"]
        t = int(s.get("timeout", self.timeout))
        if op == "join":
            req = {"role": "agent", "name": s.get("name", self.name), "office_id": s.get("office", self.office)}
            ack = await join_retrying(lambda: c.call(JOIN_OFFICE_EVENT, req, namespace=SMCP_NAMESPACE, timeout=t))
            return plain(ack)
        if op == "join_sdk":
            # The SDK's own join_office, on the namespace the step names
            # (none: the SDK's default, which is "/"). It has no ack.
            await c.join_office(s.get("office", self.office), s.get("name", self.name), namespace=s.get("namespace"))
            return None
        if op == "leave":
            return plain(
                await c.call(
                    LEAVE_OFFICE_EVENT, {"office_id": s.get("office", self.office)}, namespace=SMCP_NAMESPACE, timeout=t
                )
            )
        if op == "list_room":
            return plain(await c.get_computers_in_office(s.get("office", self.office), timeout=t))
        if op == "get_tools":
            return plain(await c.get_tools_from_computer(s["computer"], timeout=t))
        if op == "get_config":
            return plain(await c.get_config_from_computer(s["computer"], timeout=t))
        if op == "get_desktop":
            return plain(
                await c.get_desktop_from_computer(s["computer"], size=s.get("size"), window=s.get("window"), timeout=t)
            )
        if op == "tool_call":
            self._building = s.get("id")
            res = await c.emit_tool_call(s["computer"], s["tool"], s.get("params", {}), t)
            return plain(res)
        if op == "cancel":
            req_id = s.get("req_id") or self.req_ids.get(s.get("call", ""))
            if not req_id:
                raise ValueError(f"no tool_call with id {s.get('call')!r} is known")
            await c.emit(CANCEL_TOOL_CALL_EVENT, {"agent": self.name, "req_id": req_id}, namespace=SMCP_NAMESPACE)
            return {"req_id": req_id}
        if op == "get_resources":
            return plain(await c.get_resources(s["computer"], s["mcp_server"], s.get("cursor"), timeout=t))
        if op == "get_skills":
            return plain(await c.get_skills(s["computer"], timeout=t))
        if op == "get_skill":
            return plain(await c.get_skill(s["computer"], s["name"], s.get("rel_path"), timeout=t))
        if op == "get_blob":
            ret = await c.get_blob(
                s["computer"],
                s["blob_handle"],
                chunk_offset=s.get("chunk_offset", 0),
                max_chunk_bytes=s.get("max_chunk_bytes"),
                timeout=t,
            )
            return plain(ret)
        if op == "put_blob":
            if not hasattr(c, "put_blob"):
                raise NotImplementedError("this a2c-smcp has no put_blob (added in 0.4.0)")
            data = base64.b64decode(s["data_b64"]) if "data_b64" in s else s.get("text", "").encode()
            return plain(await c.put_blob(s["computer"], data, name_hint=s.get("name_hint"), timeout=t))
        if op == "raw_call":
            return plain(await c.call(s["event"], s.get("data"), namespace=s.get("namespace", SMCP_NAMESPACE), timeout=t))
        raise ValueError(f"unknown op {op!r}")


async def run_step(peer: Peer, s: dict) -> None:
    out: dict = {"op": s.get("op")}
    if "id" in s:
        out["id"] = s["id"]
    loop = asyncio.get_running_loop()
    started = loop.time()
    try:
        result = await asyncio.wait_for(peer.step(s), s.get("deadline_ms", 60000) / 1000)
        out.update(ok=True, result=result)
    except asyncio.TimeoutError:
        out.update(ok=False, hung=True, error="no answer before the step deadline")
    except Exception as e:  # reported to the Go test
        out.update(ok=False, error=str(e), error_type=type(e).__name__)
        # A protocol refusal (SMCPProtocolError) carries the Computer's
        # flat ErrorPayload; an upload's (BlobUploadError) its reason.
        if isinstance(getattr(e, "payload", None), dict):
            out["payload"] = e.payload
        if isinstance(getattr(e, "reason", None), str):
            out["reason"] = e.reason
        if os.environ.get("SMCP_DRIVER_TRACE"):
            out["trace"] = traceback.format_exc()
    out["ms"] = int((loop.time() - started) * 1000)
    emit_line(out)


async def main() -> int:
    logs_to_stderr()
    url = os.environ["SMCP_URL"]
    office = os.environ.get("SMCP_OFFICE", "o1")
    name = os.environ.get("SMCP_AGENT", "py-agent")
    timeout = int(os.environ.get("SMCP_TIMEOUT", "20"))
    auth = DefaultAgentAuthProvider(agent_id=name, office_id=office, api_key=os.environ.get("SMCP_API_KEY"))
    client = AsyncSMCPAgentClient(auth_provider=auth, event_handler=Printer())
    try:
        await asyncio.wait_for(client.connect_to_server(url, wait_timeout=timeout), timeout + 5)
    except Exception as e:
        emit_line({"op": "connect", "ok": False, "error": str(e), "error_type": type(e).__name__})
        return 1
    emit_line({"op": "connect", "ok": True})
    peer = Peer(client, office, name, timeout)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    background: set[asyncio.Task] = set()
    while True:
        line = await reader.readline()
        if not line:
            break
        line = line.strip()
        if not line:
            continue
        try:
            s = json.loads(line)
        except ValueError as e:
            emit_line({"op": "parse", "ok": False, "error": str(e)})
            continue
        if s.get("op") == "quit":
            break
        if "id" in s:
            task = asyncio.create_task(run_step(peer, s))
            background.add(task)
            task.add_done_callback(background.discard)
        else:
            await run_step(peer, s)
    for task in list(background):
        task.cancel()
    try:
        await asyncio.wait_for(client.disconnect(), 10)
    except Exception:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
