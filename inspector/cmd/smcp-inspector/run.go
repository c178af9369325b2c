package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/inspector"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// Exit codes, as smcp-agent's.
const (
	exitOK          = 0
	exitError       = 1
	exitUsage       = 2
	exitInterrupted = 130
)

// Defaults.
const (
	defaultServer = "http://127.0.0.1:8080"
	defaultListen = "127.0.0.1:7780"
	shutdownWait  = 5 * time.Second
)

type options struct {
	server, office, apiKey, name, listen, logLevel string
	allowRemote, verbose, version                  bool
	timeout                                        time.Duration
}

// secretFlag is a string flag whose value -h never shows (its String is
// empty), for values such as an API key that the environment may supply.
type secretFlag struct{ p *string }

func (s secretFlag) String() string { return "" }
func (s secretFlag) Set(v string) error {
	*s.p = v
	return nil
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// run executes the command line and returns the exit code; getenv supplies
// the environment.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	o := options{
		server:      or(getenv("SMCP_SERVER"), defaultServer),
		office:      getenv("SMCP_OFFICE"),
		apiKey:      getenv("SMCP_API_KEY"),
		name:        or(getenv("SMCP_AGENT_NAME"), inspector.DefaultName),
		listen:      or(getenv("SMCP_INSPECTOR_LISTEN"), defaultListen),
		allowRemote: getenv("SMCP_INSPECTOR_ALLOW_REMOTE") == "1",
		logLevel:    or(getenv("SMCP_LOG_LEVEL"), "warn"),
		timeout:     agent.DefaultTimeout,
	}
	fs := flag.NewFlagSet("smcp-inspector", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {} // -h: printed once, on stdout, below
	fs.StringVar(&o.server, "server", o.server, "Server URL (env SMCP_SERVER)")
	fs.StringVar(&o.office, "office", o.office, "office to join (env SMCP_OFFICE)")
	fs.Var(secretFlag{&o.apiKey}, "api-key", "API key (env SMCP_API_KEY); never sent to the browser")
	fs.StringVar(&o.name, "name", o.name, "agent name (env SMCP_AGENT_NAME)")
	fs.StringVar(&o.listen, "listen", o.listen, "address of the page (env SMCP_INSPECTOR_LISTEN)")
	fs.BoolVar(&o.allowRemote, "allow-remote", o.allowRemote, "allow a non-loopback --listen, behind a login token (env SMCP_INSPECTOR_ALLOW_REMOTE=1)")
	fs.DurationVar(&o.timeout, "timeout", o.timeout, "timeout of each request to the Server")
	fs.StringVar(&o.logLevel, "log-level", o.logLevel, "log to stderr from this level: debug, info, warn, error (env SMCP_LOG_LEVEL)")
	fs.BoolVar(&o.verbose, "verbose", false, "log from debug level (--log-level debug)")
	fs.BoolVar(&o.version, "version", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(stdout, fs)
			return exitOK
		}
		return usageError(stderr, "%v (run smcp-inspector -h)", err)
	}
	if o.version {
		fmt.Fprintln(stdout, protocol.VersionLine("smcp-inspector"))
		return exitOK
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "unexpected argument %q", fs.Arg(0))
	}
	if o.office == "" {
		return usageError(stderr, "no office: give --office or set SMCP_OFFICE")
	}
	if o.timeout <= 0 {
		return usageError(stderr, "--timeout must be positive")
	}
	loopback, err := loopbackAddress(o.listen)
	if err != nil {
		return usageError(stderr, "--listen %q: %v", o.listen, err)
	}
	if !loopback && !o.allowRemote {
		return usageError(stderr, "--listen %q is not a loopback address: add --allow-remote to serve it there behind a login token", o.listen)
	}

	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return usageError(stderr, "--log-level: want debug, info, warn or error: %q", o.logLevel)
	}
	if o.verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	opts := []inspector.Option{
		inspector.WithName(o.name), inspector.WithLogger(logger),
		inspector.WithAgentOptions(agent.WithTimeout(o.timeout)),
	}
	if o.apiKey != "" {
		opts = append(opts, inspector.WithAPIKey(o.apiKey))
	}
	var token string
	if !loopback {
		token = rand.Text()
		opts = append(opts, inspector.WithLoginToken(token))
	}

	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fail(stderr, protocol.Errorf(protocol.CodeUnavailable, "listen on %s: %v", o.listen, err))
	}
	defer ln.Close()
	dialCtx, cancel := context.WithTimeout(ctx, o.timeout)
	in, err := inspector.Dial(dialCtx, o.server, o.office, opts...)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "interrupted")
			return exitInterrupted
		}
		return fail(stderr, err)
	}
	defer in.Close()

	hs := &http.Server{Handler: in.Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	url := "http://" + ln.Addr().String() + "/"
	fmt.Fprintf(stdout, "smcp-inspector: Agent %s in office %s at %s\n", o.name, o.office, o.server)
	fmt.Fprintf(stdout, "page: %s\n", url)
	if token != "" {
		fmt.Fprintf(stdout, "login token: %s\n(open %slogin and give it; the page is reachable from other machines)\n", token, url)
	}

	var runErr error
	select {
	case <-ctx.Done():
	case err := <-served:
		runErr = err
	case <-in.Client().Done():
		runErr = in.Client().Err()
	}
	sctx, scancel := context.WithTimeout(context.Background(), shutdownWait)
	defer scancel()
	_ = in.Close() // ends the event streams first, so Shutdown does not wait on them
	_ = hs.Shutdown(sctx)
	if runErr != nil && !errors.Is(runErr, http.ErrServerClosed) {
		return fail(stderr, runErr)
	}
	return exitOK
}

// loopbackAddress reports whether host:port names only this machine. An
// empty host listens on every interface: not loopback.
func loopbackAddress(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, err
	}
	if strings.EqualFold(host, "localhost") {
		return true, nil
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback(), nil
}

func usage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintln(w, "usage: smcp-inspector --office ID [--server URL] [--api-key KEY] [--listen 127.0.0.1:PORT]")
	fmt.Fprintln(w, "\nflags:")
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

func usageError(w io.Writer, format string, args ...any) int {
	fmt.Fprintf(w, "error %d: %s\n", protocol.CodeBadRequest, fmt.Sprintf(format, args...))
	return exitUsage
}

// fail prints err as "error <code>: <message>".
func fail(w io.Writer, err error) int {
	perr := protocol.AsError(err)
	fmt.Fprintf(w, "error %d: %s\n", int(perr.Code), perr.Message)
	return exitError
}
