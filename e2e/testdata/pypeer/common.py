"""What the Python drivers of the e2e interop harness share: one JSON object
per line on standard output, and the SDK's own log moved to standard error
(a2c_smcp logs to standard output by default, A2C_SMCP_LOG_LEVEL sets its
level)."""

import json
import logging
import sys
from collections.abc import Awaitable, Callable
from typing import Any


def emit_line(v: dict) -> None:
    sys.stdout.write(json.dumps(v, ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()


def logs_to_stderr() -> None:
    """Point every handler that writes to standard output at standard error."""
    for logger in [logging.getLogger()] + [
        lg for lg in logging.Logger.manager.loggerDict.values() if isinstance(lg, logging.Logger)
    ]:
        for h in logger.handlers:
            if isinstance(h, logging.StreamHandler) and getattr(h, "stream", None) is sys.stdout:
                h.setStream(sys.stderr)


def plain(v: Any) -> Any:
    """A JSON-ready copy of an SDK answer: pydantic models (MCP's CallToolResult
    among them) dumped by alias, i.e. with MCP's wire names such as `_meta`;
    dataclasses and TypedDicts as they are."""
    if hasattr(v, "model_dump"):
        return v.model_dump(mode="json", by_alias=True, exclude_none=True)
    if hasattr(v, "__dataclass_fields__"):
        return {k: plain(getattr(v, k)) for k in v.__dataclass_fields__}
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    return v


async def join_retrying(join: Callable[[], Awaitable[Any]], attempts: int = 3) -> Any:
    """Runs join (a server:join_office that waits for its ack, bounded by the
    SDK's timeout) again when it gets no answer: the Rust 0.4.1 Server can
    drop the first event a client sends after CONNECT, because it registers
    its event handlers only after an async auth step."""
    for attempt in range(1, attempts + 1):
        try:
            return await join()
        except Exception as e:  # python-socketio's TimeoutError, or the SDK's wrapping of it
            if "timeout" not in type(e).__name__.lower() or attempt == attempts:
                raise
            print(f"join: no answer ({type(e).__name__}), sending it again", file=sys.stderr, flush=True)
