// Command smcp-server runs the A2C-SMCP signalling Server (spec/protocol.md) on
// one HTTP listener: the Socket.IO endpoint at /socket.io/ (namespace /smcp),
// a liveness probe at /healthz, a readiness probe at /readyz and Prometheus
// metrics at /metrics.
//
// Every flag has an environment equivalent (SMCP_<FLAG>, dashes as
// underscores); a flag given on the command line wins. API keys are required
// unless --insecure-no-auth is given. SIGINT or SIGTERM starts a graceful
// shutdown: routed requests in flight get --shutdown-timeout to finish, every
// office hears its members leave, then the listener closes.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/server"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

func main() {
	// SIGQUIT keeps Go's default (goroutine dump on stderr, exit status 2):
	// the Socket.IO libraries may trap it in an init function.
	signal.Reset(syscall.SIGQUIT)
	if protocol.PrintVersion("smcp-server", os.Args[1:], os.Stdout) {
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first signal starts a graceful shutdown (--shutdown-timeout); from
	// then on the signals have their default action again, so a second one
	// ends the process at once.
	go func() { <-ctx.Done(); stop() }()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stderr, nil); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "smcp-server:", err)
		os.Exit(1)
	}
}

type settings struct {
	listen          string
	apiKeys         string
	apiKeyHeader    string
	insecureNoAuth  bool
	corsOrigins     string
	logLevel        string
	logFormat       string
	requestTimeout  time.Duration
	toolCallMargin  time.Duration
	maxPayload      int64
	validateAnswers bool
	shutdownTimeout time.Duration
	pingInterval    time.Duration
	pingTimeout     time.Duration
	keysFile        string
	maxOutgoing     int64
	stallTimeout    time.Duration
	maxInFlight     int64
	maxToolTimeout  time.Duration
	maxOfficeSize   int64
	maxAuthFailures int64
	maxConns        int64
	maxConnsPerIP   int64
	maxPending      int64
	maxPendingAddr  int64
	trustedProxies  string
	clientAddrHdr   string
	maxEventRate    int64
	connectTimeout  time.Duration
	debugListen     string
	memoryRelease   time.Duration
	redisURL        string
	nodeLease       time.Duration
	gcHeapFloor     int64
	versions        string
	strictHandshake bool
}

// helpOutput receives -h's usage: standard output, as for every smcp
// command.
var helpOutput io.Writer = os.Stdout

// parse reads the flags, taking each default from its SMCP_* variable. -h
// prints the flags on help and returns flag.ErrHelp; a bad flag is
// returned, printed by the caller on one line.
func parse(args []string, getenv func(string) string, help io.Writer) (*settings, error) {
	s := &settings{}
	fs := flag.NewFlagSet("smcp-server", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {} // -h: printed on help below; errors: returned
	str := func(p *string, name, def, usage string) {
		fs.StringVar(p, name, envOr(getenv, name, def), usage+" ("+envName(name)+")")
	}
	str(&s.listen, "listen", "127.0.0.1:8080", "listen address")
	// The keys' variable is read after parsing so that -h never prints them.
	fs.StringVar(&s.apiKeys, "api-keys", "", "comma-separated API keys accepted from the x-api-key header or the auth payload's api_key or token ("+envName("api-keys")+")")
	str(&s.apiKeyHeader, "api-key-header", server.DefaultAPIKeyHeader, "header carrying the API key")
	str(&s.corsOrigins, "cors-origins", "", `comma-separated origins allowed to connect from a browser ("*" for any)`)
	str(&s.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	str(&s.logFormat, "log-format", "json", "log format: json or text")
	str(&s.keysFile, "keys-file", "", `JSON file of scoped API keys: [{"id", "secret", "offices": [...], "roles": [...], "max_sessions"}] (empty lists, 0: any)`)
	// The Redis URL's variable is read after parsing: it may hold a password.
	fs.StringVar(&s.redisURL, "redis", "", "redis://[:password@]host:port/db of the cluster's Redis (≥ 7); this process is then one node of the cluster ("+envName("redis")+")")
	str(&s.debugListen, "debug-listen", "", "address of a loopback listener serving /debug/pprof/ and /debug/vars (off when empty)")
	str(&s.trustedProxies, "trusted-proxies", "", "comma-separated addresses or CIDR prefixes of the reverse proxies in front of the Server, whose --client-address-header names the client counted by the per-address bounds (empty: every client is its TCP peer)")
	str(&s.clientAddrHdr, "client-address-header", "X-Forwarded-For", "with --trusted-proxies: X-Forwarded-For or Forwarded (the rightmost address that is not a trusted proxy), or a one-address header such as X-Real-IP")
	str(&s.versions, "protocol-versions", defaultVersions(), "comma-separated protocol generations accepted in a client's a2c_version (MAJOR.MINOR); a client naming none speaks 0.2")

	var errs []error
	boolean := func(p *bool, name string, usage string) {
		def := false
		if v := getenv(envName(name)); v != "" {
			b, err := parseBool(v)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", envName(name), err))
			}
			def = b
		}
		fs.BoolVar(p, name, def, usage+" ("+envName(name)+")")
	}
	boolean(&s.insecureNoAuth, "insecure-no-auth", "accept every connection without an API key (development only)")
	boolean(&s.validateAnswers, "validate-answers", "validate Computer answers, as each Agent receives them, against the ack schemas of its generation")
	boolean(&s.strictHandshake, "strict-handshake", "refuse a handshake without a2c_version (HTTP 400), as the 0.4 reference Servers do; with --protocol-versions 0.4 the Server answers exactly as they do")

	duration := func(p *time.Duration, name string, def time.Duration, usage string) {
		if v := getenv(envName(name)); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", envName(name), err))
			}
			def = d
		}
		fs.DurationVar(p, name, def, usage+" ("+envName(name)+")")
	}
	duration(&s.requestTimeout, "request-timeout", server.DefaultRequestTimeout, "how long a routed request other than client:tool_call waits for the Computer")
	duration(&s.toolCallMargin, "tool-call-margin", server.DefaultToolCallMargin, "added to a client:tool_call's own timeout")
	duration(&s.shutdownTimeout, "shutdown-timeout", 10*time.Second, "how long a graceful shutdown may take")
	duration(&s.pingInterval, "ping-interval", server.DefaultPingInterval, "how often each connection is pinged")
	duration(&s.pingTimeout, "ping-timeout", server.DefaultPingTimeout, "how long a pong may take before the connection is closed (must exceed --ping-interval)")
	duration(&s.stallTimeout, "stall-timeout", server.DefaultStallTimeout, "how long a connection may stay over --max-outgoing-bytes before it is closed")
	duration(&s.maxToolTimeout, "max-tool-call-timeout", server.DefaultMaxToolCallTimeout, "largest timeout a client:tool_call may ask for (over it: 400)")
	duration(&s.connectTimeout, "connect-timeout", server.DefaultConnectTimeout, "how long a connection may take to be admitted to /smcp")
	duration(&s.nodeLease, "node-lease", server.DefaultNodeLease, "with --redis: how long a node's sessions outlive its last heartbeat")
	duration(&s.memoryRelease, "memory-release-interval", 500*time.Millisecond, "how often to check for a quiet process holding freed heap, which is then returned to the OS (0: the Go runtime's own pace)")

	integer := func(p *int64, name string, def int64, usage string) {
		if v := getenv(envName(name)); v != "" {
			if _, err := fmt.Sscan(v, &def); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", envName(name), err))
			}
		}
		fs.Int64Var(p, name, def, usage+" ("+envName(name)+")")
	}
	integer(&s.maxPayload, "max-payload-bytes", server.DefaultMaxPayloadBytes, "largest Socket.IO message accepted")
	integer(&s.maxOutgoing, "max-outgoing-bytes", server.DefaultMaxOutgoingBytes, "bytes held for a peer that does not read before it is congested (503)")
	integer(&s.maxInFlight, "max-in-flight", server.DefaultMaxInFlight, "routed requests in flight per Agent and per Computer (over it: 429)")
	integer(&s.maxOfficeSize, "max-office-size", server.DefaultMaxOfficeSize, "members of one office (over it: 4105)")
	integer(&s.maxAuthFailures, "max-auth-failures", server.DefaultMaxAuthFailures, "refused connects per connection before it is closed")
	integer(&s.maxConns, "max-connections", server.DefaultMaxConnections, "connections held at once, joined or not (over it: HTTP 503 at the handshake)")
	integer(&s.maxPending, "max-pending-connections", server.DefaultMaxPendingConnections, "connections held at once whose /smcp connect is not admitted yet (over it: HTTP 503 at the handshake)")
	integer(&s.maxPendingAddr, "max-pending-per-address", -1, "connections awaiting admission one client address (an IPv6 /64) may hold (over it: HTTP 429; -1: an eighth of --max-pending-connections; 0: no bound)")
	integer(&s.maxEventRate, "max-event-rate", server.DefaultMaxEventRate, "joins, leaves, room listings and cancels one session may send a second, in bursts of twice as many (over it: 429)")
	integer(&s.maxConnsPerIP, "max-connections-per-ip", 0, "connections held at once from one remote address (over it: HTTP 429; 0: no bound; behind a proxy, bound it there)")
	integer(&s.gcHeapFloor, "gc-heap-floor", defaultGCHeapFloor, "heap size below which the garbage collector does not start a cycle, while the Server routes 500+ requests a second and the live heap is small (0: Go's default pacing; ignored when GOGC is set)")

	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(help, "usage of smcp-server:")
			fs.SetOutput(help)
			fs.PrintDefaults()
		}
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if s.apiKeys == "" {
		s.apiKeys = getenv(envName("api-keys"))
	}
	if s.redisURL == "" {
		s.redisURL = getenv(envName("redis"))
	}
	return s, nil
}

// readKeysFile reads --keys-file: a JSON array of server.Key. Secrets are
// never logged; errors name the entry by index.
func readKeysFile(path string) ([]server.Key, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("keys file: %w", err)
	}
	defer f.Close()
	dec := json.NewDecoder(io.LimitReader(f, 16<<20))
	dec.DisallowUnknownFields()
	var keys []server.Key
	if err := dec.Decode(&keys); err != nil {
		return nil, fmt.Errorf("keys file %s: %w", path, err)
	}
	if _, err := server.KeyAuth("", keys...); err != nil {
		return nil, fmt.Errorf("keys file %s: %w", path, err)
	}
	return keys, nil
}

// defaultVersions is --protocol-versions' default: every generation the
// Server speaks, as MAJOR.MINOR.
func defaultVersions() string {
	var out []string
	for _, g := range protocol.Generations() {
		v := g.Version()
		out = append(out, fmt.Sprintf("%d.%d", v.Major, v.Minor))
	}
	return strings.Join(out, ",")
}

// parseGenerations reads --protocol-versions: MAJOR.MINOR or a full
// version per entry, each naming a generation the Server speaks.
func parseGenerations(v string) ([]protocol.Generation, error) {
	var gens []protocol.Generation
	for _, p := range splitList(v) {
		name := p
		if strings.Count(p, ".") == 1 {
			name += ".0"
		}
		g, err := protocol.ParseGeneration(name)
		if err != nil {
			return nil, fmt.Errorf("--protocol-versions: %q: %s", p, protocol.AsError(err).Message)
		}
		if !slices.Contains(gens, g) {
			gens = append(gens, g)
		}
	}
	if len(gens) == 0 {
		return nil, errors.New("--protocol-versions: no generation")
	}
	return gens, nil
}

func envName(flagName string) string {
	return "SMCP_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

func envOr(getenv func(string) string, flagName, def string) string {
	if v := getenv(envName(flagName)); v != "" {
		return v
	}
	return def
}

func parseBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "1", "true", "yes", "on":
		return true, nil
	case "0", "false", "no", "off":
		return false, nil
	}
	return false, fmt.Errorf("%q is not a boolean", v)
}

func splitList(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func newLogger(level, format string, w io.Writer) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("log level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: l}
	switch format {
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("log format %q: want json or text", format)
}

// run serves until ctx ends, then shuts down gracefully. ready, when not
// nil, receives the bound address once the listener is up.
func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer, ready chan<- string) error {
	s, err := parse(args, getenv, helpOutput)
	if err != nil {
		return err
	}
	log, err := newLogger(s.logLevel, s.logFormat, stderr)
	if err != nil {
		return err
	}
	gens, err := parseGenerations(s.versions)
	if err != nil {
		return err
	}
	if s.debugListen == "" {
		// Heap profiles are served only by the debug listener. Without it
		// the runtime's sampling would only cost: its records are never
		// freed and grow with the variety of allocation sites a long run
		// meets (~1.5 MB after 30,000 connections; spec/decisions.md, Idle
		// memory per connection).
		runtime.MemProfileRate = 0
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	srvReg := teeRouted(reg)
	startGCFloor(ctx, uint64(max(s.gcHeapFloor, 0)), getenv, watchRouting(ctx, srvReg).routing)
	opts := []server.Option{
		server.WithLogger(log),
		server.WithMetrics(srvReg),
		server.WithRequestTimeout(s.requestTimeout),
		server.WithToolCallMargin(s.toolCallMargin),
		server.WithMaxPayloadBytes(s.maxPayload),
		server.WithHeartbeat(s.pingInterval, s.pingTimeout),
		server.WithValidateAnswers(s.validateAnswers),
		server.WithMaxOutgoingBytes(s.maxOutgoing),
		server.WithStallTimeout(s.stallTimeout),
		server.WithMaxInFlight(int(min(s.maxInFlight, math.MaxInt32))),
		server.WithMaxToolCallTimeout(s.maxToolTimeout),
		server.WithMaxOfficeSize(int(min(s.maxOfficeSize, math.MaxInt32))),
		server.WithMaxAuthFailures(int(min(s.maxAuthFailures, math.MaxInt32))),
		server.WithMaxConnections(int(min(s.maxConns, math.MaxInt32))),
		server.WithMaxConnectionsPerIP(int(min(s.maxConnsPerIP, math.MaxInt32))),
		server.WithMaxPendingConnections(int(min(s.maxPending, math.MaxInt32))),
		server.WithMaxEventRate(int(min(s.maxEventRate, math.MaxInt32))),
		server.WithConnectTimeout(s.connectTimeout),
		server.WithProtocolGenerations(gens...),
		server.WithStrictHandshake(s.strictHandshake),
	}
	if s.maxPendingAddr >= 0 {
		opts = append(opts, server.WithMaxPendingPerAddress(int(min(s.maxPendingAddr, math.MaxInt32))))
	}
	if proxies := splitList(s.trustedProxies); len(proxies) > 0 {
		opts = append(opts, server.WithTrustedProxies(s.clientAddrHdr, proxies...))
	}
	keys := splitList(s.apiKeys)
	var scoped []server.Key
	if s.keysFile != "" {
		if scoped, err = readKeysFile(s.keysFile); err != nil {
			return err
		}
	}
	switch {
	case s.insecureNoAuth && (len(keys) > 0 || len(scoped) > 0):
		return errors.New("--insecure-no-auth and --api-keys (or --keys-file) exclude each other")
	case s.insecureNoAuth:
		log.Warn("authentication disabled (--insecure-no-auth): every connection is accepted")
		opts = append(opts, server.WithAuth(server.InsecureNoAuth()))
	case len(keys) == 0 && len(scoped) == 0:
		return errors.New("no API keys: set --api-keys (or SMCP_API_KEYS) or --keys-file, or --insecure-no-auth for development")
	default:
		if len(keys) > 0 {
			opts = append(opts, server.WithAPIKeys(keys...))
		}
		opts = append(opts, server.WithKeys(scoped...), server.WithAPIKeyHeader(s.apiKeyHeader))
		log.Info("API keys loaded", "unscoped", len(keys), "scoped", len(scoped))
	}
	if s.redisURL != "" {
		opts = append(opts, server.WithRedis(s.redisURL), server.WithNodeLease(s.nodeLease))
	}
	if origins := splitList(s.corsOrigins); len(origins) > 0 {
		opts = append(opts, server.WithCORSOrigins(origins...))
	}
	srv, err := server.New(opts...)
	if err != nil {
		return err
	}

	mux := http.NewServeMux()
	mux.Handle("/socket.io/", srv.Handler())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"ok"}`)
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		w.Header().Set("Content-Type", "application/json")
		if err := srv.Ready(ctx); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			_ = json.NewEncoder(w).Encode(map[string]string{"status": "not ready", "reason": err.Error()})
			return
		}
		_, _ = io.WriteString(w, `{"status":"ready"}`)
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}))
	ln, err := net.Listen("tcp", s.listen)
	if err != nil {
		return err
	}
	if s.debugListen != "" {
		stopDebug, err := serveDebug(s.debugListen, log)
		if err != nil {
			_ = ln.Close()
			return err
		}
		defer stopDebug()
	}
	if s.memoryRelease > 0 {
		rctx, stopRelease := context.WithCancel(ctx)
		released := make(chan struct{})
		go func() {
			defer close(released)
			newMemoryReleaser(log).run(rctx, s.memoryRelease)
		}()
		defer func() { stopRelease(); <-released }()
	}
	// Slow and oversized headers are bounded before the Server sees the
	// request (its Handler bounds headers at 32 KiB too).
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 64 << 10, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	log.Info("smcp-server listening", "addr", ln.Addr().String(), "cluster", s.redisURL != "",
		"protocol_versions", fmt.Sprint(gens), "strict_handshake", s.strictHandshake)
	if ready != nil {
		ready <- ln.Addr().String()
	}

	select {
	case err := <-served:
		_ = srv.Close(context.Background())
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down (a second interrupt stops at once)", "timeout", s.shutdownTimeout.String())
	sctx, cancel := context.WithTimeout(context.Background(), s.shutdownTimeout)
	defer cancel()
	closeErr := srv.Close(sctx)
	if err := hs.Shutdown(sctx); err != nil {
		_ = hs.Close()
		closeErr = errors.Join(closeErr, err)
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		closeErr = errors.Join(closeErr, err)
	}
	if closeErr != nil {
		log.Warn("shutdown incomplete", "error", closeErr.Error())
		return nil // a deadline during shutdown is reported, not fatal
	}
	log.Info("stopped")
	return nil
}
