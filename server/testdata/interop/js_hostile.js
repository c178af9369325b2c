// A hostile client written with the official JavaScript socket.io-client,
// driven by server/hostile_test.go (TestHostileJavaScriptClient). SMCP_MODE
// chooses the misbehaviour:
//   binary   joins an office, then emits an event carrying a Buffer (a
//            Socket.IO BINARY_EVENT with one attachment);
//   badkeys  connects with a wrong key (the client closes its transport
//            after the refusal).
//   bigname  joins with a name of SMCP_NAME_LEN characters.
// It prints one JSON object per line on stdout:
//   {"step":"joined","ok":...,"reason":...}
//   {"step":"connect_error","data":...}
//   {"step":"closed","reason":...}       the transport closed
// and exits 1 on any other error or after a timeout.
const { io } = require("socket.io-client");

const out = (o) => process.stdout.write(JSON.stringify(o) + "\n");
const fail = (msg) => {
  out({ step: "error", message: String(msg) });
  process.exit(1);
};
setTimeout(() => fail("timeout"), 30000).unref();

const mode = process.env.SMCP_MODE;
const badkeys = mode === "badkeys";
const socket = io(process.env.SMCP_URL + "/smcp", {
  auth: { api_key: badkeys ? "wrong" : process.env.SMCP_API_KEY },
  transports: ["websocket"],
  reconnection: false,
  forceNew: true,
});
// Reported on the next turn: after a refusal the client closes its transport
// before it emits connect_error.
socket.io.on("close", (reason) =>
  setImmediate(() => {
    out({ step: "closed", reason });
    process.exit(0);
  }),
);

socket.on("connect_error", (err) => {
  out({ step: "connect_error", data: err.data || null });
  if (!badkeys) fail("connect_error: " + err.message);
});

socket.on("connect", () => {
  if (badkeys) fail("admitted with a wrong key");
  const name = mode === "bigname" ? "n".repeat(Number(process.env.SMCP_NAME_LEN)) : "js-binary";
  socket.timeout(10000).emit("server:join_office", { role: "computer", name, office_id: "o-js" }, (err, ok, reason) => {
    if (err) fail(err);
    out({ step: "joined", ok, reason });
    if (mode === "binary") {
      socket.emit("server:update_tool_list", { computer: name, blob: Buffer.alloc(1 << 20) });
    } else {
      socket.close();
      out({ step: "closed", reason: "client" });
      process.exit(0);
    }
  });
});
