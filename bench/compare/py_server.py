"""The Python reference SDK's Server (a2c-smcp 0.1.2) for `go run mage.go benchcompare`.

The SDK's SMCPNamespace on python-socketio's AsyncServer under uvicorn, with
its defaults except authentication: the SDK's DefaultAuthenticationProvider
reads environ["asgi"]["scope"], which python-engineio does not set, so it
refuses every connection; this provider accepts the one API key given, from
the x-api-key header (as the SDK's provider intends) or the auth payload.

    python py_server.py PORT API_KEY
"""

import sys

import socketio
import uvicorn
from a2c_smcp.server import AuthenticationProvider, SMCPNamespace


class KeyAuth(AuthenticationProvider):
    def __init__(self, key: str) -> None:
        self.key = key

    async def authenticate(self, sio, environ, auth, headers) -> bool:
        if isinstance(auth, dict) and auth.get("api_key") == self.key:
            return True
        return environ.get("HTTP_X_API_KEY") == self.key


def main() -> None:
    port, key = int(sys.argv[1]), sys.argv[2]
    sio = socketio.AsyncServer(async_mode="asgi", transports=["websocket"], max_http_buffer_size=8 << 20)
    sio.register_namespace(SMCPNamespace(KeyAuth(key)))
    app = socketio.ASGIApp(sio, socketio_path="/socket.io")
    print("listening", flush=True)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", ws="websockets" if _has_websockets() else "wsproto")


def _has_websockets() -> bool:
    try:
        import websockets  # noqa: F401

        return True
    except ImportError:
        return False


if __name__ == "__main__":
    main()
