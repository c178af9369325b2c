"""The Python reference SDK's Server (a2c-smcp 0.1.2, 0.3.3 or 0.4.2, whichever
the interpreter has) in its documented setup, for the Go interop harness
(e2e/peers_test.go): SMCPNamespace with the DefaultAuthenticationProvider
(the key in SMCP_API_KEY as its admin secret, read from the SDK's default
field, auth.token), on a socketio.AsyncServer behind socketio.ASGIApp, wrapped
in A2CProtocolVersionASGIMiddleware (the version gate: the SDK's README says
an unwrapped app checks nothing; 0.1.2 has no such gate and ignores the
version), served by uvicorn.

The README's own recipe passes `api_key_name="x-api-key"`, which makes the
Server read the key from a field the SDK's own Agent and Computer never send
(they send `token`), so this program keeps the provider's default field.

Usage: server.py [HOST:PORT] (default 127.0.0.1:0). Prints
`{"ready":true,"url":"http://HOST:PORT"}` once uvicorn listens, and serves
until it is killed. Logs (SMCP_LOG_LEVEL, default WARNING) go to standard
error.
"""

import asyncio
import logging
import os
import socket
import sys

import socketio
import uvicorn

from a2c_smcp.server import DefaultAuthenticationProvider, SMCPNamespace
from common import emit_line, logs_to_stderr

try:
    from a2c_smcp.server import A2CProtocolVersionASGIMiddleware
except ImportError:  # a2c-smcp 0.1.2 (protocol 0.2.0) has no version gate: it ignores a2c_version
    A2CProtocolVersionASGIMiddleware = None

try:
    from a2c_smcp import PROTOCOL_VERSION
except ImportError:  # the constant lives in a2c_smcp.version in some releases
    try:
        from a2c_smcp.version import PROTOCOL_VERSION
    except ImportError:  # and a2c-smcp 0.1.2 has none: protocol 0.2.0
        PROTOCOL_VERSION = "0.2.0"


class ScopeHeadersAuth(DefaultAuthenticationProvider):
    """a2c-smcp 0.1.2's provider (key in the x-api-key header), handed the
    request's headers: that release looks for them in environ["asgi"]["scope"],
    where python-socketio's ASGI app does not put them (it sets
    environ["asgi.scope"]), so it refuses every key (PEERS.md)."""

    async def authenticate(self, sio, environ, auth, headers):
        if not headers:
            headers = environ.get("asgi.scope", {}).get("headers", [])
        return await super().authenticate(sio, environ, auth, headers)


class Server(uvicorn.Server):
    """uvicorn's Server, announcing the bound address once it listens."""

    async def startup(self, sockets=None) -> None:
        await super().startup(sockets=sockets)
        if self.started:
            host, port = sockets[0].getsockname()[:2]
            emit_line({"ready": True, "url": f"http://{host}:{port}", "a2c_version": PROTOCOL_VERSION})


async def main() -> None:
    level = os.environ.get("SMCP_LOG_LEVEL", "WARNING")
    logging.basicConfig(stream=sys.stderr, level=level)
    logs_to_stderr()
    host, _, port = (sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:0").rpartition(":")
    sio = socketio.AsyncServer(async_mode="asgi", cors_allowed_origins="*")
    auth = DefaultAuthenticationProvider if A2CProtocolVersionASGIMiddleware is not None else ScopeHeadersAuth
    sio.register_namespace(SMCPNamespace(auth(admin_secret=os.environ["SMCP_API_KEY"])))
    app = socketio.ASGIApp(sio, socketio_path="/socket.io")
    if A2CProtocolVersionASGIMiddleware is not None:
        app = A2CProtocolVersionASGIMiddleware(app, socketio_path="/socket.io", server_version=PROTOCOL_VERSION)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host or "127.0.0.1", int(port)))
    config = uvicorn.Config(app, log_level=level.lower(), lifespan="off")
    await Server(config).serve(sockets=[sock])


if __name__ == "__main__":
    asyncio.run(main())
