// The reference floor of `go run mage.go benchcompare`: a bare socket.io 4.8
// server with no protocol logic. It keeps a name → socket map from
// server:join_office and forwards every client:* request to the named
// Computer with an ack, answering the Agent with the Computer's one value.
// No validation, no office checks, no timeouts beyond socket.io's own: the
// least any SMCP server could do on this wire.
//   node relay.js PORT
const { Server } = require("socket.io");

const port = Number(process.argv[2]);
const io = new Server(port, { transports: ["websocket"], maxHttpBufferSize: 8 << 20 });
const nsp = io.of("/smcp");
const byName = new Map();

nsp.on("connection", (socket) => {
  socket.on("server:join_office", (req, ack) => {
    byName.set(req.name, socket);
    socket.join(req.office_id);
    if (ack) ack(true, null);
  });
  const forward = (event) =>
    socket.on(event, (req, ack) => {
      const target = byName.get(req.computer);
      if (!target) return ack && ack({ error: { code: 404, message: "no computer" } });
      target.timeout(30000).emit(event, req, (err, ret) => {
        if (ack) ack(err ? { error: { code: 408, message: "timeout" } } : ret);
      });
    });
  forward("client:tool_call");
  forward("client:get_tools");
  socket.on("disconnect", () => {
    for (const [name, s] of byName) if (s === socket) byName.delete(name);
  });
});
process.stdout.write("listening\n");
