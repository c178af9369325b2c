// An A2C-SMCP Agent written with the official JavaScript socket.io-client,
// driven by the Go interop test (server/interop_test.go). It prints one JSON
// object per line on stdout:
//   {"step":"joined","ok":...,"reason":...}       server:join_office, both ack values
//   {"step":"finder","ret":...}                   a routed client:get_finder
//   {"step":"refused","ok":...,"reason":...}      a join the office rules refuse
//   {"step":"ready"}                              waiting for notifications
//   {"step":"notify","event":...,"data":...}      each notify:* received
//   {"step":"done"}                               every expected notification came
// and exits 1 on any error or after a timeout.
const { io } = require("socket.io-client");

const url = process.env.SMCP_URL;
const office = process.env.SMCP_OFFICE;
const agent = process.env.SMCP_AGENT;
const computer = process.env.SMCP_COMPUTER;
const transport = process.env.SMCP_TRANSPORT || "websocket";
const expected = (process.env.SMCP_EXPECT || "").split(",").filter(Boolean);
const ACK_MS = 10000;

const out = (o) => process.stdout.write(JSON.stringify(o) + "\n");
const fail = (msg) => {
  out({ step: "error", message: String(msg) });
  process.exit(1);
};
setTimeout(() => fail("timeout"), 30000).unref();

const socket = io(url + "/smcp", {
  auth: { api_key: process.env.SMCP_API_KEY },
  transports: [transport],
  reconnection: false,
  forceNew: true,
});

// The Go server library (servers/socket v3.0.2) can drop a namespace CONNECT
// that arrives right after the engine handshake, and socket.io-client has no
// timeout for it: retry a connect that has not completed.
let attempts = 0;
const retry = setInterval(() => {
  if (socket.connected) return clearInterval(retry);
  if (++attempts > 3) fail("no namespace connect");
  socket.disconnect().connect();
}, 5000);
retry.unref();

const seen = new Set();
socket.onAny((event, data) => {
  if (!event.startsWith("notify:")) return;
  out({ step: "notify", event, data });
  seen.add(event);
  if (expected.length && expected.every((e) => seen.has(e))) {
    out({ step: "done" });
    socket.close();
    process.exit(0);
  }
});

// emit with an ack and resolve with every ack value.
const call = (event, payload) =>
  new Promise((resolve, reject) => {
    socket.timeout(ACK_MS).emit(event, payload, (err, ...args) => (err ? reject(err) : resolve(args)));
  });

socket.on("connect_error", (err) => fail("connect_error: " + err.message + " " + JSON.stringify(err.data)));
socket.on("connect", async () => {
  try {
    const [ok, reason] = await call("server:join_office", { role: "agent", name: agent, office_id: office });
    out({ step: "joined", ok, reason });
    const [ret] = await call("client:get_finder", { agent, req_id: "js-1", computer, keywords: ["bench"], limit: 5 });
    out({ step: "finder", ret });
    const [ok2, reason2] = await call("server:join_office", { role: "agent", name: agent, office_id: office + "-other" });
    out({ step: "refused", ok: ok2, reason: reason2 });
    out({ step: "ready" });
  } catch (e) {
    fail(e);
  }
});
