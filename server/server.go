package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/zishang520/socket.io/servers/engine/v3/transports"
	"github.com/zishang520/socket.io/servers/socket/v3"
	"github.com/zishang520/socket.io/v3/pkg/types"
	"golang.org/x/time/rate"
)

// Server is the A2C-SMCP signalling Server (spec/protocol.md): it authenticates
// Socket.IO connections to the /smcp namespace, keeps the offices and the
// namespace-wide name registry, routes client:* requests from an Agent to one
// Computer of its office, and broadcasts notify:* events. Create it with New,
// mount Handler on your mux at "/socket.io/", stop it with Close.
type Server struct {
	cfg     *config
	log     *slog.Logger
	io      *socket.Server
	nsp     socket.Namespace
	engine  http.Handler
	handler http.Handler
	known   map[string]*protocol.EventInfo
	m       *metrics // nil without WithMetrics
	cl      *cluster // nil on a single node (cluster.go)

	// ctx is cancelled by Close; authentication runs under it.
	ctx    context.Context
	cancel context.CancelFunc

	closeOnce   sync.Once
	stopped     atomic.Bool // the Socket.IO server is closed
	authWG      sync.WaitGroup
	conns       sync.Map // Engine.IO connection id → *conn (engine.go)
	limits      connLimits
	refusals    everySecond // the log line of refused connections (connlimit.go)
	connLogs    logBudget   // the log lines of refused CONNECTs and closed connections (ratelimit.go)
	refusalLogs logBudget   // the refusal lines of all sessions (ratelimit.go)

	mu       sync.Mutex
	closing  bool
	sessions map[socket.SocketId]*session
	names    map[string]*session              // namespace-wide name registry
	remoteIn map[remoteRef]*remoteIn          // cluster mode: requests from other nodes that asked for progress (cluster_progress.go)
	offices  map[string]map[*session]struct{} // office id → members
	// officeRates bounds what each office's events make the Server send
	// (ratelimit.go); an office's limiter goes with the office.
	officeRates map[string]*rate.Limiter
	// The tables' peaks, to rebuild them once far below (tables.go).
	sessionsPeak, namesPeak, officesPeak, officeRatesPeak peak
	keySessions                                           map[*Grant]int     // sessions per grant with MaxSessions (auth.go)
	largeDecodes                                          chan struct{}      // places for decoding large payloads (decode.go)
	calls                                                 map[*call]struct{} // routed requests in flight
	drained                                               chan struct{}      // closed when closing and every call answered (settled)
	seq                                                   uint64
}

// New returns a Server configured by opts. Authentication must be configured
// (WithAPIKeys or WithAuth); New fails otherwise, and on invalid options.
func New(opts ...Option) (*Server, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		if err := o(cfg); err != nil {
			return nil, fmt.Errorf("server: %w", err)
		}
	}
	if err := cfg.finish(); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	s := &Server{
		cfg:          cfg,
		log:          cfg.logger,
		known:        map[string]*protocol.EventInfo{},
		sessions:     map[socket.SocketId]*session{},
		names:        map[string]*session{},
		offices:      map[string]map[*session]struct{}{},
		officeRates:  map[string]*rate.Limiter{},
		calls:        map[*call]struct{}{},
		largeDecodes: make(chan struct{}, maxLargeDecodes),
		drained:      make(chan struct{}),
		limits: connLimits{max: int64(cfg.maxConns), perIP: cfg.maxConnsPerIP,
			maxPending: int64(cfg.maxPending), pendingPerAddr: cfg.maxPendingAddr},
	}
	for _, g := range protocol.Generations() { // newest last: its entry wins
		for _, info := range g.Events() {
			s.known[info.Name] = info
		}
	}
	s.refusalLogs.every, s.refusalLogs.burst = serverRefusalLogRate, serverRefusalLogBurst
	s.ctx, s.cancel = context.WithCancel(context.Background())
	if cfg.metrics != nil {
		m, err := newMetrics(cfg.metrics, s)
		if err != nil {
			return nil, fmt.Errorf("server: WithMetrics: %w", err)
		}
		s.m = m
	}

	so := socket.DefaultServerOptions()
	so.SetServeClient(false)
	so.SetMaxHttpBufferSize(cfg.maxPayloadBytes)
	so.SetPingInterval(cfg.pingInterval)
	so.SetPingTimeout(cfg.pingTimeout)
	so.SetParser(wireParser{s: s})
	so.SetTransports(types.NewSet[transports.TransportCtor](pollingTransportBuilder{}, wsTransportBuilder{s: s}))
	so.SetConnectTimeout(cfg.connectTimeout)
	if len(cfg.corsOrigins) > 0 {
		var origin any = cfg.corsOrigins
		if len(cfg.corsOrigins) == 1 {
			origin = cfg.corsOrigins[0]
		} else {
			list := make([]any, len(cfg.corsOrigins))
			for i, o := range cfg.corsOrigins {
				list[i] = o
			}
			origin = list
		}
		so.SetCors(&types.Cors{Origin: origin, Credentials: true})
	}
	if cfg.redis != nil {
		cl, builder, err := newCluster(s)
		if err != nil {
			return nil, fmt.Errorf("server: %w", err)
		}
		s.cl = cl
		so.SetAdapter(builder)
	}
	s.io = socket.NewServer(nil, so)
	s.engine = s.io.ServeHandler(nil)
	if err := s.io.Engine().On("connection", s.onEngineConnection); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	if err := s.confirmGenerations(); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	s.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.stopped.Load() {
			http.Error(w, "smcp server closed", http.StatusServiceUnavailable)
			return
		}
		if headerBytes(r) > maxRequestHeaderBytes {
			s.connRefused(r.RemoteAddr, s.cfg.clientAddrs.of(nil, r.RemoteAddr), refusedHeaders)
			refuseConnection(w, refusedHeaders)
			return
		}
		// Read once here: the query and the upgrade header decide the path.
		query := r.URL.Query()
		if !s.versionGate(w, r, query) {
			return
		}
		_, hasSid := query["sid"] // a request without one opens a new Engine.IO connection
		upgrade := strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
		if !upgrade {
			var release func()
			var ok bool
			r, release, ok = s.boundPolling(w, r, query.Get("sid"))
			if !ok {
				return
			}
			defer release()
		}
		if !hasSid {
			client := s.cfg.clientAddrs.of(r.Header, r.RemoteAddr)
			p, reason := s.limits.reserve(r, client)
			if reason != "" {
				s.connRefused(r.RemoteAddr, client, reason)
				refuseConnection(w, reason)
				return
			}
			defer s.limits.unreserve(r, p) // unless its connection claimed it
		}
		if upgrade {
			serveHoldingReads(s.engine, w, r)
			return
		}
		servePolling(s.engine, w, r)
	})

	// Only /smcp is served: the default namespace refuses every client.
	s.io.Use(func(sock *socket.Socket, next func(*socket.ExtendedError)) {
		defer s.authFailed(sock.Conn().Id())
		next(socket.NewExtendedError("use the "+protocol.Namespace+" namespace", map[string]any{"code": int(protocol.CodeNotFound)}))
	})
	s.nsp = s.io.Of(protocol.Namespace, nil)
	s.nsp.Use(s.authenticate)
	if err := s.nsp.On("connection", s.onConnection); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	if s.cl != nil {
		if err := s.cl.start(); err != nil {
			s.io.Close(nil)
			s.cl.close(context.Background())
			s.cl.closeClient()
			return nil, fmt.Errorf("server: %w", err)
		}
	}
	return s, nil
}

// maxRequestHeaderBytes bounds the request line and headers of every
// request to the Handler (spec/protocol.md, Limits). The library keeps a
// connection's handshake request until its /smcp CONNECT is admitted
// (forgetHandshake drops it then): net/http's default bound, 1 MB
// (http.DefaultMaxHeaderBytes), made every connection awaiting admission
// cost about 1 MB more (measured: 947 KB each with a 900 KB header). An SMCP
// handshake needs a few hundred bytes; 32 KiB is what nginx accepts by
// default (four 8 KiB buffers), so a proxied client never gets near it.
const maxRequestHeaderBytes = 32 << 10

// headerBytes is about what r's request line and headers took on the wire.
func headerBytes(r *http.Request) int {
	n := len(r.Method) + len(r.RequestURI) + len(r.Host) + 16
	for k, vs := range r.Header {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
	}
	return n
}

// boundPolling bounds the Engine.IO long-polling request r in time and in
// number (spec/decisions.md, Limits against hostile clients), and reports
// false when it has answered r itself.
//
//   - One poll (GET) and one POST at a time per session: an overlapping one
//     is answered 400 here and the session carries on. The library would
//     close the session on a second poll and leave the first one waiting
//     for an answer that never comes, its goroutine held for as long as
//     the client keeps the request open, after the session's place among
//     the connections is freed; and its check of a second POST is not
//     atomic, so POSTs racing each other could all be read at once.
//   - A POST's body is read here, within the heartbeat's interval plus its
//     timeout (what a websocket message may take too: wsTransport's idle
//     deadline) and up to the connection's message limit, and handed to
//     the library whole. The library reads a trickled body for as long as
//     the client likes, after its session is gone; and a session closed
//     meanwhile (by the heartbeat, say) answers the POST from another
//     goroutine while the reader may be writing the same response headers,
//     a concurrent map write.
//   - An answer is written within twice that: a healthy poll is answered
//     at the latest by the Server's next ping.
//   - A poll still waiting when its connection closes is ended then.
//
// The deadlines are set on the connection when the ResponseWriter allows
// it (http.ResponseController); net/http sets them again for the
// connection's next request. A poll is served under a context the Server
// cancels when its connection closes or its client goes away (pollWait,
// engine.go): the library never answers a poll waiting then, and its
// request context races when it is cancelled by a goroutine that has not
// synchronised with the request's, as net/http's does when the client
// leaves. It gets no deadline of its own, for the same reason (so no read
// deadline either: net/http would cancel the context when its background
// read reaches it).
func (s *Server) boundPolling(w http.ResponseWriter, r *http.Request, sid string) (_ *http.Request, release func(), ok bool) {
	d := s.cfg.pingInterval + s.cfg.pingTimeout
	rc := http.NewResponseController(w)
	now := time.Now()
	_ = rc.SetWriteDeadline(now.Add(2 * d))
	var c *conn
	if sid != "" {
		c = s.conn(sid)
	}
	if c == nil || (r.Method != http.MethodGet && r.Method != http.MethodPost) {
		// A handshake, an unknown session: the library answers at once.
		// Not under r's context, which net/http cancels from its own
		// goroutine if the client leaves meanwhile (pollWait, engine.go).
		return r.WithContext(context.WithoutCancel(r.Context())), func() {}, true
	}
	if r.Method == http.MethodGet {
		// Not r's context: net/http cancels it from its own goroutine when
		// the client goes away (pollWait, engine.go).
		ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
		gen, refused := c.poll.start(cancel)
		if refused != "" {
			cancel()
			refuseHTTP(w, http.StatusBadRequest, refused)
			return nil, nil, false
		}
		gone := context.AfterFunc(r.Context(), func() { c.poll.abandon(gen) })
		return r.WithContext(ctx), func() {
			gone()
			c.poll.end()
			cancel()
		}, true
	}
	if !c.posting.CompareAndSwap(false, true) {
		refuseHTTP(w, http.StatusBadRequest, "overlapping long-polling request")
		return nil, nil, false
	}
	release = func() { c.posting.Store(false) }
	fail := func(status int, msg string) (*http.Request, func(), bool) {
		release()
		refuseHTTP(w, status, msg)
		return nil, nil, false
	}
	if r.Body != nil {
		_ = rc.SetReadDeadline(now.Add(d))
		limit := s.cfg.maxPayloadBytes
		if !c.admitted.Load() {
			limit = min(preAdmissionPayload, limit)
		}
		if r.ContentLength > limit {
			return fail(http.StatusRequestEntityTooLarge, "message over the payload limit")
		}
		var body bytes.Buffer
		if r.ContentLength > 0 {
			body.Grow(int(r.ContentLength))
		}
		_, err := body.ReadFrom(io.LimitReader(r.Body, limit+1))
		_ = r.Body.Close()
		switch {
		case err != nil:
			return fail(http.StatusRequestTimeout, "long-polling body not received in time")
		case int64(body.Len()) > limit:
			return fail(http.StatusRequestEntityTooLarge, "message over the payload limit")
		}
		r.Body = io.NopCloser(&body)
		r.ContentLength = int64(body.Len())
	}
	return r, release, true
}

// Handler returns the http.Handler of the Socket.IO endpoint; mount it at
// "/socket.io/" (the path every Socket.IO client uses by default). After
// Close it answers 503.
func (s *Server) Handler() http.Handler { return s.handler }

// authenticate is the namespace middleware: it runs the AuthProvider off the
// transport goroutine and admits or refuses the connection (spec/protocol.md,
// Connection and auth). Neither the key nor the auth payload is logged.
func (s *Server) authenticate(sock *socket.Socket, next func(*socket.ExtendedError)) {
	hs := sock.Handshake()
	req := &AuthRequest{Header: http.Header{}, Auth: hs.Auth, RemoteAddr: hs.Address}
	if c := s.conn(sock.Conn().Id()); c != nil && c.place != nil {
		req.ClientAddr = c.place.addr
	} else {
		req.ClientAddr = s.cfg.clientAddrs.of(nil, hs.Address)
	}
	if r := sock.Request(); r != nil {
		// All returns a copy, which becomes the request's header once its
		// keys are canonical: one map per handshake, not two.
		h := r.Headers().All()
		for k, vs := range h {
			if ck := http.CanonicalHeaderKey(k); ck != k {
				delete(h, k)
				h[ck] = vs
			}
		}
		req.Header = h
	}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		next(connectError(protocol.NewInternal("server is shutting down")))
		return
	}
	s.authWG.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.authWG.Done()
		err := s.runAuth(req)
		if err == nil {
			err = s.countKeySession(sock.Conn().Id(), req.Grant)
		}
		if err == nil {
			sock.SetData(req.Grant)
			s.admitted(sock.Conn().Id())
			next(nil)
			return
		}
		s.connLogs.warn(s.log, "connection refused", "remote", req.RemoteAddr, "client", req.ClientAddr, "code", int(err.Code), "reason", err.Message)
		s.m.authRefused(err.Code)
		next(connectError(err))
		s.authFailed(sock.Conn().Id())
	}()
}

// runAuth calls the provider with a bounded context and turns its answer into
// a protocol error: a *protocol.Error keeps its code and message, anything
// else is a bare 401, and a panic is a 500.
func (s *Server) runAuth(req *AuthRequest) (perr *protocol.Error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("auth provider panicked", "remote", req.RemoteAddr, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			perr = protocol.NewInternal("authentication failed")
		}
	}()
	ctx, cancel := context.WithTimeout(s.ctx, s.cfg.authTimeout)
	defer cancel()
	err := s.cfg.auth.Authenticate(ctx, req)
	if err == nil {
		return nil
	}
	var e *protocol.Error
	if errors.As(err, &e) {
		return &protocol.Error{Code: e.Code, Message: e.Message}
	}
	return protocol.NewUnauthorized("unauthorized")
}

func connectError(e *protocol.Error) *socket.ExtendedError {
	return socket.NewExtendedError(e.Message, map[string]any{"code": int(e.Code), "message": e.Message})
}

// forgetHandshake drops what the library keeps of an admitted socket's
// handshake for the connection's life, which nothing reads once
// authentication has: the socket's copies of the request's headers and
// query and the auth payload (which may hold the API key), and the
// connection's own request headers and parsed query, read only when a
// socket is created (a second /smcp CONNECT on a connection closes it, and
// the Server closes the connection when its /smcp socket goes). This saves
// ~1.5 KB per session (spec/decisions.md, Idle memory per connection).
func forgetHandshake(sock *socket.Socket) {
	hs := sock.Handshake()
	hs.Headers, hs.Query, hs.Auth = nil, nil, nil
	if r := sock.Request(); r != nil {
		h := r.Headers()
		for _, k := range h.Keys() {
			h.Remove(k)
		}
		r.Query().Replace(map[string][]string{})
	}
}

// closeGrace is how long a client that left /smcp has to close its
// transport before the Server does.
const closeGrace = time.Second

// onConnection registers the handlers of one admitted socket.
func (s *Server) onConnection(args ...any) {
	sock, ok := args[0].(*socket.Socket)
	if !ok {
		return
	}
	// The library has registered the socket on its connection: packets
	// held by the gate may go on (engine.go).
	defer s.registered(sock.Conn().Id())
	grant, _ := sock.Data().(*Grant)
	sess := &session{
		id:     string(sock.Id()),
		sock:   sock,
		conn:   s.conn(sock.Conn().Id()),
		grant:  grant,
		remote: sock.Handshake().Address,
		gone:   make(chan struct{}),
		gen:    protocol.DefaultGeneration,
	}
	if sess.conn != nil {
		sess.gen, sess.version = sess.conn.gen, sess.conn.version
	}
	if lacksNotifications[sess.gen] {
		sock.Join(lacksRoom(sess.gen)) // notifyExcept: the notifications it lacks pass it by
	}
	forgetHandshake(sock)
	s.mu.Lock()
	closing := s.closing
	if !closing {
		s.sessions[sock.Id()] = sess
		s.sessionsPeak.grew(len(s.sessions))
	}
	s.mu.Unlock()
	if closing {
		sock.Disconnect(true)
		return
	}
	if sess.conn != nil {
		sess.conn.smcp.Store(sess) // the reader counts its messages from here on (backlog.go)
	}
	attrs := []any{"sid", sess.id, "remote", sess.remote, "a2c_version", sess.gen.String()}
	if sess.conn != nil && sess.conn.place != nil {
		attrs = append(attrs, "client", sess.conn.place.addr)
	}
	if grant != nil {
		attrs = append(attrs, "key_id", grant.KeyID)
	}
	s.log.Info("session connected", attrs...)

	// One catch-all listener instead of one per event name: it runs on the
	// socket's task goroutine in arrival order all the same, and saves a
	// listener entry per event per connection (spec/decisions.md, Idle
	// memory per connection).
	sock.OnAny(func(args ...any) {
		ev, _ := firstString(args)
		if info, ok := sess.gen.Lookup(ev); ok {
			s.dispatch(sess, info, args[1:])
			return
		}
		s.unknownEvent(sess, ev, args)
	})
	_ = sock.On("disconnect", func(args ...any) {
		reason, _ := firstString(args)
		s.disconnected(sess, reason)
		if reason == "client namespace disconnect" {
			// SMCP clients use /smcp only: a transport left without it
			// would idle until the peer goes away. The peer closes it
			// itself right after its namespace DISCONNECT; closing it
			// first made that close fail on the client's side (the Rust
			// SDK's disconnect returned "EngineIO Error"), so the Server
			// closes only what is still open a moment later.
			conn := sock.Conn()
			time.AfterFunc(closeGrace, func() { conn.Close(false) })
		}
	})
	// Two races of the library leave a socket connected, or its session in
	// s.sessions, for ever, with everything of its connection (~2.7 KB each;
	// 16 of 20,000 short sessions in smcp-memprobe's churn). It sends the
	// CONNECT answer, then adds the socket to its connection, then runs this
	// handler, all on the socket's task goroutine, while the connection's
	// close runs on its read goroutine: a peer that closes as soon as it has
	// read the answer can close the connection before the socket is added
	// (its close then never reaches the socket), or close the socket before
	// the listener above exists (the library marks the socket disconnected,
	// then emits "disconnect" to the listeners it has at that moment).
	// Whichever way each race goes, the calls below or the listener remove
	// it; disconnected runs once per session (spec/decisions.md, Socket.IO
	// library defects).
	if sock.Conn().ReadyState() != "open" {
		sock.Disconnect(false)
	}
	if sock.Disconnected() {
		s.disconnected(sess, "closed while connecting")
		go sock.Conn().Close(false)
	}
}

// dispatch runs one event of a known name: it splits the payload from the
// ack, recovers any panic into a 500, and hands the event to its handler.
func (s *Server) dispatch(sess *session, info *protocol.EventInfo, args []any) {
	payloads, ack := splitAck(args)
	r := newReply(ack, info.AckArity, sess.gen, info.Name)
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("handler panicked", "sid", sess.id, "event", info.Name, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			r.fail(protocol.NewInternal("internal error while handling %s", info.Name))
		}
	}()
	if s.cfg.testHook != nil {
		s.cfg.testHook(info.Name)
	}
	if info.Direction == protocol.DirectionNotify {
		s.refuse(sess, info.Name, "", r, protocol.NewForbidden("%s is sent by the Server only", info.Name))
		return
	}
	if len(payloads) != 1 {
		s.refuse(sess, info.Name, "", r, protocol.NewBadRequest("%s takes exactly one payload argument, got %d", info.Name, len(payloads)).With("event", info.Name))
		return
	}
	// Arguments from the wire arrive undecoded (wireParser): handlers check
	// the decoded value, and a routed request is forwarded as its bytes.
	raw, _ := payloads[0].(json.RawMessage)
	if !utf8.Valid(raw) {
		// JSON is UTF-8 (RFC 8259, section 8.1), and every SDK's encoder
		// writes it so; decoding would turn each invalid byte into U+FFFD,
		// so that distinct byte strings would name one member
		// (spec/decisions.md, Limits against hostile clients).
		s.refuse(sess, info.Name, "", r, protocol.NewBadRequest("%s payload is not valid UTF-8", info.Name).With("event", info.Name))
		return
	}
	release, perr := s.acquireDecode(len(raw))
	if perr != nil {
		perr = perr.With("event", info.Name)
		if info.Direction == protocol.DirectionClient {
			perr = notForwarded(perr)
		}
		s.refuse(sess, info.Name, "", r, perr)
		return
	}
	// Held until the event is handled: the decoded value lives as long.
	defer release()
	payload, err := decodeArg(payloads[0])
	if err != nil {
		s.refuse(sess, info.Name, "", r, protocol.NewBadRequest("%s payload is not valid JSON", info.Name).With("event", info.Name))
		return
	}
	switch info.Name {
	case protocol.EventJoinOffice, protocol.EventLeaveOffice, protocol.EventListRoom, protocol.EventCancelToolCall:
		if err := s.allowEvent(sess, info.Name); err != nil {
			s.refuse(sess, info.Name, reqIDOf(payload), r, err)
			return
		}
	}
	switch {
	case info.Direction == protocol.DirectionClient:
		s.route(sess, info, payload, raw, r)
	case info.Name == protocol.EventJoinOffice:
		s.joinOffice(sess, payload, r)
	case info.Name == protocol.EventLeaveOffice:
		s.leaveOffice(sess, payload, r)
	case info.Name == protocol.EventListRoom:
		s.listRoom(sess, payload, r)
	case info.Name == protocol.EventCancelToolCall:
		s.cancelToolCall(sess, payload, r)
	case info.Name == protocol.EventToolProgress:
		s.toolProgress(sess, payload, r)
	case info.Broadcasts != "":
		s.update(sess, info, payload, r)
	default:
		s.refuse(sess, info.Name, "", r, protocol.NewBadRequest("%s is not handled by the Server", info.Name))
	}
}

// unknownEvent logs an event that the session's generation does not have
// and, when the sender asked for an ack, answers 400 in the sender's shape:
// an event of another generation (a 0.2.0 session's client:get_skills)
// with its ack arity, naming the generation, anything else as an unknown
// event.
func (s *Server) unknownEvent(sess *session, ev string, args []any) {
	_, ack := splitAck(args)
	ev = clip(ev, 64)
	if info, ok := anyEvent(ev); ok {
		s.refuse(sess, ev, "", newReply(ack, info.AckArity, sess.gen, ev),
			protocol.NewBadRequest("event %q is not part of protocol %s, which this session speaks", ev, sess.gen).With("event", ev))
		return
	}
	s.refuse(sess, ev, "", newReply(ack, 1, sess.gen, ev), protocol.NewBadRequest("unknown event %q", ev))
}

// refuse logs a refusal and answers it when the sender asked for an ack.
// Events without an ack get the log line only (spec/protocol.md, Errors).
func (s *Server) refuse(sess *session, event, reqID string, r *reply, e *protocol.Error) {
	attrs := []any{"sid", sess.id, "event", event, "code", int(e.Code), "reason", e.Message}
	if reqID != "" {
		attrs = append(attrs, "req_id", reqID)
	}
	if name, role := sess.identity(s); name != "" {
		attrs = append(attrs, "name", name, "role", string(role))
	}
	if r == nil || !r.asked() {
		attrs = append(attrs, "ack", false)
	}
	if ok, unlogged, serverUnlogged := s.logRefusal(sess); ok {
		if unlogged > 0 {
			attrs = append(attrs, "refusals_not_logged", unlogged)
		}
		if serverUnlogged > 0 {
			attrs = append(attrs, "server_refusals_not_logged", serverUnlogged)
		}
		s.log.Warn("request refused", attrs...)
	}
	if info := s.known[event]; info != nil && info.Direction == protocol.DirectionClient {
		s.m.routedOutcome(event, e, time.Time{})
	}
	r.fail(e)
}

// Close shuts the Server down gracefully: new connections are refused,
// routed requests in flight get until ctx ends to be answered (then a 500),
// every session's office peers receive its notify:leave_office (flushed to
// the transports while ctx allows), and the transports close, so clients
// see a transport close and reconnect to the next server. When ctx has a
// deadline, the drain stops a quarter of the budget (at most a second)
// early, so that the 500s and notifications can still be flushed. Close
// returns the context's error when the drain did not complete; calling it
// again returns nil.
func (s *Server) Close(ctx context.Context) error {
	err := errAlreadyClosed
	s.closeOnce.Do(func() { err = s.shutdown(ctx) })
	if err == errAlreadyClosed {
		return nil
	}
	return err
}

var errAlreadyClosed = errors.New("already closed")

func (s *Server) shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	s.settled()
	s.log.Info("server closing")

	// The drain may use the caller's budget but a quarter of it (at most a
	// second), kept for the final answers and notifications to be flushed.
	drainCtx := ctx
	if dl, ok := ctx.Deadline(); ok {
		reserve := min(time.Until(dl)/4, time.Second)
		var cancel context.CancelFunc
		drainCtx, cancel = context.WithDeadline(ctx, dl.Add(-reserve))
		defer cancel()
	}
	var drainErr error
	select {
	case <-s.drained:
	case <-drainCtx.Done():
		drainErr = drainCtx.Err()
	}
	s.failAll(protocol.NewInternal("server is shutting down"))
	s.cancel()
	if s.cl != nil {
		s.clusterShutdown(ctx)
	}
	s.notifyShutdown(ctx)
	s.stopped.Store(true)
	s.io.Close(nil)
	if s.cl != nil {
		s.cl.closeClient()
	}

	done := make(chan struct{})
	go func() {
		s.authWG.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
	s.log.Info("server closed")
	if drainErr != nil {
		return drainErr
	}
	return ctx.Err()
}

func splitAck(args []any) ([]any, socket.Ack) {
	if n := len(args); n > 0 {
		if ack, ok := args[n-1].(socket.Ack); ok {
			return args[:n-1], ack
		}
	}
	return args, nil
}

func firstString(args []any) (string, bool) {
	if len(args) == 0 {
		return "", false
	}
	s, ok := args[0].(string)
	return s, ok
}

// clip bounds a client-chosen string before it reaches a log line or message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
