// The load generator of `go run mage.go benchcompare`, the same for every
// server under test: the official socket.io-client 4.8 plays both the Agents
// and the Computers of OFFICES offices, so the server's only work is the
// SMCP routing. It connects and joins, warms up, prints "ready", waits for a
// line "go" on stdin (the harness samples the server's CPU around the
// measured phase), sends routed requests with INFLIGHT outstanding per
// office for DURATION_MS milliseconds (or REQUESTS requests when DURATION_MS
// is not set), and prints one JSON line: {p50_ms, p99_ms, rps, errors,
// requests, secs, cpu_s}, where cpu_s is the load generator's own CPU time
// over the phase: next to the server's, it tells which of the two set the
// pace.
// With BATCH_WRITES=1 each socket writes what one turn of the event loop
// sends on it with one system call (batchWrites).
// In IDLE mode it joins IDLE Computers (each its own office), prints
// "ready", and stays connected until stdin closes.
//
// Environment: URL, API_KEY, SCENARIO (tool_call | get_tools), OFFICES,
// INFLIGHT, REQUESTS, DURATION_MS, WARMUP, IDLE, BATCH_WRITES.
const { io } = require("socket.io-client");
const readline = require("readline");

const env = process.env;
const url = env.URL;
const scenario = env.SCENARIO || "tool_call";
const offices = Number(env.OFFICES || 1);
const inflight = Number(env.INFLIGHT || 1);
const requests = Number(env.REQUESTS || 10000);
const durationMs = Number(env.DURATION_MS || 0);
const warmup = Number(env.WARMUP || 1000);
const idle = Number(env.IDLE || 0);
const batch = env.BATCH_WRITES === "1";
const ACK_MS = 30000;

const fail = (msg) => {
  process.stderr.write("loadgen: " + msg + "\n");
  process.exit(1);
};
setTimeout(() => fail("run longer than 10 minutes"), 600000).unref();

// Answers as a Computer would give them: a 1 KB tool result, and a tool
// list of about 9 KB (12 tools with descriptions and input schemas).
const toolResult = { content: [{ type: "text", text: "r".repeat(1024) }], isError: false };
const tools = Array.from({ length: 12 }, (_, i) => ({
  name: "tool_" + i,
  description: "Reads and summarises the records of ledger " + i + ". ".repeat(8) + "d".repeat(300),
  params_schema: {
    type: "object",
    properties: { path: { type: "string", description: "p".repeat(80) }, limit: { type: "integer", minimum: 1 } },
    required: ["path"],
  },
  return_schema: null,
  meta: { tags: ["bench", "ledger"], auto_apply: false },
}));

const connect = () =>
  new Promise((resolve, reject) => {
    const s = io(url + "/smcp", {
      transports: ["websocket"],
      forceNew: true,
      reconnection: false,
      auth: { api_key: env.API_KEY },
      extraHeaders: { "x-api-key": env.API_KEY },
    });
    s.once("connect", () => {
      if (batch) batchWrites(s);
      resolve(s);
    });
    s.once("connect_error", (e) => reject(new Error("connect_error: " + e.message)));
  });

// batchWrites makes a connected socket write what one turn of the event
// loop sends on it with one system call: the first write of a turn corks
// the TCP socket and the turn's check phase, after its I/O callbacks and
// their promise continuations, uncorks it. Without it the client writes
// every Socket.IO packet with a write(2) of its own, about a third of its
// CPU per request, and at 32 requests in flight it uses its whole core
// with any of the servers measured: the load generator, not the server,
// then sets the pace (docs/performance.md, Fifth round). Nothing waits
// longer than the turn that sent it.
const batchWrites = (s) => {
  // engine.io-client 6.6's websocket transport holds the ws WebSocket as
  // .ws, whose TCP socket is ._socket (versions pinned in package.json).
  const sock = s.io.engine.transport.ws && s.io.engine.transport.ws._socket;
  if (!sock || typeof sock.cork !== "function") fail("BATCH_WRITES: no TCP socket under the websocket transport");
  const write = sock.write;
  let corked = false;
  sock.write = function (...args) {
    if (!corked) {
      corked = true;
      sock.cork();
      setImmediate(() => {
        corked = false;
        sock.uncork();
      });
    }
    return write.apply(sock, args);
  };
};

const call = (s, event, payload) =>
  new Promise((resolve, reject) => {
    s.timeout(ACK_MS).emit(event, payload, (err, ...args) => (err ? reject(err) : resolve(args)));
  });

const join = async (s, role, name, office) => {
  const [ok, reason] = await call(s, "server:join_office", { role, name, office_id: office });
  if (!ok) throw new Error("join refused: " + reason);
};

const waitFor = (line) =>
  new Promise((resolve) => {
    const rl = readline.createInterface({ input: process.stdin });
    rl.on("line", (l) => {
      if (l.trim() === line) {
        rl.close();
        resolve();
      }
    });
    rl.on("close", resolve);
  });

async function idleMode() {
  const sockets = [];
  for (let i = 0; i < idle; i++) {
    const s = await connect();
    await join(s, "computer", "idle-" + i, "idle-office-" + i);
    sockets.push(s);
  }
  process.stdout.write("ready\n");
  await waitFor("stop");
  sockets.forEach((s) => s.close());
  process.exit(0);
}

async function loadMode() {
  const pairs = [];
  for (let o = 0; o < offices; o++) {
    const office = "bench-" + o;
    const computer = await connect();
    computer.on("client:tool_call", (req, ack) => ack(toolResult));
    computer.on("client:get_tools", (req, ack) => ack({ tools, req_id: req.req_id }));
    await join(computer, "computer", "c" + o, office);
    const agent = await connect();
    await join(agent, "agent", "a" + o, office);
    pairs.push({ agent, name: "a" + o, computer: "c" + o });
  }
  let seq = 0;
  const one = async (p) => {
    const req_id = p.name + "-" + seq++;
    const t0 = process.hrtime.bigint();
    const [ret] =
      scenario === "get_tools"
        ? await call(p.agent, "client:get_tools", { agent: p.name, req_id, computer: p.computer })
        : await call(p.agent, "client:tool_call", {
            agent: p.name, req_id, computer: p.computer, tool_name: "echo", params: { text: "hi" }, timeout: 30,
          });
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    return ret && ret.error ? -1 : ms;
  };
  // run sends n requests (or, with ms > 0, requests for ms milliseconds)
  // spread over the offices, inflight outstanding per office.
  const run = async (n, ms) => {
    const lat = [];
    let errors = 0;
    let left = ms > 0 ? Infinity : n;
    const deadline = process.hrtime.bigint() + BigInt(Math.round(ms * 1e6));
    const worker = async (p) => {
      while (left > 0 && (ms <= 0 || process.hrtime.bigint() < deadline)) {
        left--;
        const ms = await one(p).catch(() => -1);
        if (ms < 0) errors++;
        else lat.push(ms);
      }
    };
    const workers = [];
    for (const p of pairs) for (let i = 0; i < inflight; i++) workers.push(worker(p));
    const t0 = process.hrtime.bigint();
    const cpu0 = process.cpuUsage();
    await Promise.all(workers);
    const secs = Number(process.hrtime.bigint() - t0) / 1e9;
    const cpu = process.cpuUsage(cpu0);
    lat.sort((a, b) => a - b);
    const q = (f) => (lat.length ? lat[Math.min(lat.length - 1, Math.floor(f * lat.length))] : 0);
    return {
      p50_ms: q(0.5), p99_ms: q(0.99), rps: lat.length / secs, errors,
      requests: lat.length + errors, secs, cpu_s: (cpu.user + cpu.system) / 1e6,
    };
  };
  await run(warmup, 0);
  process.stdout.write("ready\n");
  await waitFor("go");
  const res = await run(requests, durationMs);
  process.stdout.write(JSON.stringify(res) + "\n");
  for (const p of pairs) p.agent.close();
  process.exit(0);
}

(idle ? idleMode() : loadMode()).catch((e) => fail(e && e.stack ? e.stack : e));
