// Command smcp-computer runs an A2C-SMCP Computer: it starts the MCP servers
// of a config file in the Python SDK's format and answers an Agent's
// requests through a Server (spec/protocol.md), or inspects the configured MCP
// servers locally.
//
//	smcp-computer run --server URL --office ID --name NAME --config FILE [--api-key KEY] [--max-payload-bytes N]
//	smcp-computer tools   --config FILE
//	smcp-computer desktop --config FILE [--size N] [--window URI]
//	smcp-computer finder  --config FILE [--keywords a,b] [--file-type T] [--offset N] [--limit N]
//
// Every flag has an environment equivalent (SMCP_SERVER, SMCP_OFFICE,
// SMCP_COMPUTER_NAME — SMCP_NAME is read too —, SMCP_CONFIG, SMCP_INPUTS,
// SMCP_API_KEY, SMCP_LOG_LEVEL, SMCP_LOG_FORMAT, SMCP_MAX_PAYLOAD_BYTES, ...;
// -h names each flag's); flags win. The names mean what they mean to smcp-agent and
// smcp-inspector; -h prints a command's flags on stdout and never the API
// key. --verbose is --log-level debug. --max-payload-bytes is the Server's
// payload limit (smcp-server --max-payload-bytes, default 8 MiB): give both
// the same value. --input ID=VALUE (repeatable) gives an input value;
// SMCP_INPUT_<ID> does too (see package config for the order).
//
// Large tool results: a binary item (image, audio, embedded resource blob)
// above --inline-budget (32 KiB) goes to the blob spool, served by
// client:get_blob; such an item is decoded into the spool as it arrives,
// so it neither counts against --max-mcp-message-bytes (32 MiB, the rest
// of one MCP message) nor is held in memory. Each item is bounded
// by --max-blob-bytes (100 MiB), all of them by --spool-max-bytes (1 GiB);
// past a bound the call fails with 413 naming the flag. The spool is in
// --spool-dir, or else in a directory of this process under
// $TMPDIR/smcp-spool-<uid>, removed at exit; a later start removes what a
// killed Computer left there (package blob).
//
// "run" joins its office at once; each MCP server comes up on its own and
// is announced to the office when ready (one that fails is logged and
// retried). The one-shot commands wait for every server's first attempt;
// when some did not come up (a command that does not exist, a server that
// exits), they name them on stderr, print what the others offer, and exit 1.
//
// Signals: SIGINT and SIGTERM shut down explicitly — the Computer leaves its
// office and stops every MCP child process before exiting; a second signal
// ends the process at once. SIGQUIT keeps Go's goroutine dump. However the
// program dies, its stdio MCP servers die with it (on Linux; see package
// mcpclient).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/a2c-smcp/smcp-go/computer"
	"github.com/a2c-smcp/smcp-go/computer/blob"
	"github.com/a2c-smcp/smcp-go/computer/config"
	"github.com/a2c-smcp/smcp-go/computer/mcpclient"
	"github.com/a2c-smcp/smcp-go/computer/sio"
	"github.com/a2c-smcp/smcp-go/computer/skills"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

const usage = `smcp-computer: an A2C-SMCP Computer

usage:
  smcp-computer run --server URL --office ID --name NAME --config FILE [--api-key KEY] [--protocol-versions 0.4,0.3,0.2]
                    [--landing-root DIR] [--skill-home DIR] [--plugin NAME=DIR] [--skill-settings FILE] [--skill-cache DIR] [--spool-dir DIR]
                    [--max-mcp-message-bytes N] [--max-blob-bytes N] [--spool-max-bytes N]
  smcp-computer tools   --config FILE
  smcp-computer desktop --config FILE [--size N] [--window URI]
  smcp-computer finder  --config FILE [--keywords a,b] [--file-type T] [--offset N] [--limit N]
  smcp-computer --version

common flags: --config FILE, --inputs FILE, --input ID=VALUE (repeatable),
--log-level debug|info|warn|error, --log-format text|json
run "smcp-computer <command> -h" for a command's flags.
`

func main() {
	// SIGQUIT keeps Go's default (goroutine dump on stderr, exit status 2).
	signal.Reset(syscall.SIGQUIT)
	if protocol.PrintVersion("smcp-computer", os.Args[1:], os.Stdout) {
		return
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// pluginFlag collects --plugin NAME=DIR.
type pluginFlag map[string]string

func (f pluginFlag) String() string { return fmt.Sprint(len(f), " plugins") }

func (f pluginFlag) Set(s string) error {
	n, dir, ok := strings.Cut(s, "=")
	if !ok || n == "" || dir == "" {
		return errors.New("want NAME=DIR")
	}
	f[n] = dir
	return nil
}

// inputFlag collects --input ID=VALUE.
type inputFlag map[string]string

func (f inputFlag) String() string { return fmt.Sprint(len(f), " inputs") }

func (f inputFlag) Set(s string) error {
	id, v, ok := strings.Cut(s, "=")
	if !ok || id == "" {
		return errors.New("want ID=VALUE")
	}
	f[id] = v
	return nil
}

type common struct {
	config, inputs, logLevel, logFormat string
	verbose                             bool
	values                              inputFlag
}

// secretFlag is a string flag whose value -h never shows (its String is
// empty), for values such as an API key that the environment may supply.
type secretFlag struct{ p *string }

func (s secretFlag) String() string { return "" }
func (s secretFlag) Set(v string) error {
	*s.p = v
	return nil
}

func env(key, def string) string {
	if v, ok := os.LookupEnv(key); ok {
		return v
	}
	return def
}

func (c *common) register(fs *flag.FlagSet) {
	c.values = inputFlag{}
	fs.StringVar(&c.config, "config", env("SMCP_CONFIG", ""), "MCP servers config file (Python SDK format) [SMCP_CONFIG]")
	fs.StringVar(&c.inputs, "inputs", env("SMCP_INPUTS", ""), "inputs file (one input or an array) [SMCP_INPUTS]")
	fs.StringVar(&c.logLevel, "log-level", env("SMCP_LOG_LEVEL", "info"), "log level: debug, info, warn, error [SMCP_LOG_LEVEL]")
	fs.StringVar(&c.logFormat, "log-format", env("SMCP_LOG_FORMAT", "text"), "log format: text or json [SMCP_LOG_FORMAT]")
	fs.BoolVar(&c.verbose, "verbose", false, "log from debug level (--log-level debug)")
	fs.Var(c.values, "input", "input value ID=VALUE (repeatable)")
}

func (c *common) logger(w io.Writer) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(c.logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level: %v", err)
	}
	if c.verbose {
		lvl = slog.LevelDebug
	}
	o := &slog.HandlerOptions{Level: lvl}
	switch c.logFormat {
	case "text":
		return slog.New(slog.NewTextHandler(w, o)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, o)), nil
	}
	return nil, fmt.Errorf("--log-format: want text or json, got %q", c.logFormat)
}

func (c *common) load() (*config.Config, error) {
	if c.config == "" {
		return nil, errors.New("--config FILE is required")
	}
	cfg, err := config.Load(c.config)
	if err != nil {
		return nil, err
	}
	if c.inputs != "" {
		in, err := config.LoadInputs(c.inputs)
		if err != nil {
			return nil, err
		}
		if err := cfg.AddInputs(in...); err != nil {
			return nil, err
		}
	}
	return cfg, nil
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	cmd, args := args[0], args[1:]
	fs := flag.NewFlagSet("smcp-computer "+cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // -h: the usage on stdout; errors: one line on stderr (below)
	fs.Usage = func() {}
	var c common
	c.register(fs)
	var (
		server, office, name, apiKey string
		versions                     string
		maxPayload                   int64
		metricsListen                string
		size                         int
		window, keywords, fileType   string
		offset, limit                int
		spoolDir, landing, skillHome string
		skillSettings, skillCache    string
		inlineBudget                 int64
		maxMCPMessage, maxBlob       int64
		spoolMax                     int64
		plugins                      = pluginFlag{}
	)
	switch cmd {
	case "run":
		fs.StringVar(&server, "server", env("SMCP_SERVER", ""), "Server URL, e.g. http://127.0.0.1:8000 [SMCP_SERVER]")
		fs.StringVar(&office, "office", env("SMCP_OFFICE", ""), "office (room) to join [SMCP_OFFICE]")
		fs.StringVar(&name, "name", env("SMCP_COMPUTER_NAME", env("SMCP_NAME", "")), "this Computer's name [SMCP_COMPUTER_NAME; SMCP_NAME is read too]")
		apiKey = env("SMCP_API_KEY", "")
		fs.Var(secretFlag{&apiKey}, "api-key", "API key for the Server [SMCP_API_KEY]")
		maxPayload = protocol.DefaultMaxPayloadBytes
		if v := env("SMCP_MAX_PAYLOAD_BYTES", ""); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n <= 0 {
				fmt.Fprintf(stderr, "smcp-computer: SMCP_MAX_PAYLOAD_BYTES: not a positive number: %q\n", v)
				return 2
			}
			maxPayload = n
		}
		fs.Int64Var(&maxPayload, "max-payload-bytes", maxPayload,
			"largest answer sent to the Server; the same setting as smcp-server --max-payload-bytes [SMCP_MAX_PAYLOAD_BYTES]")
		fs.StringVar(&versions, "protocol-versions", env("SMCP_PROTOCOL_VERSIONS", protocol.GenerationList(defaultGenerations())),
			"comma-separated protocol generations this Computer speaks (MAJOR.MINOR), the first named in the handshake, the others tried once when the Server refuses it; one pins it [SMCP_PROTOCOL_VERSIONS]")
		fs.StringVar(&metricsListen, "metrics-listen", env("SMCP_METRICS_LISTEN", ""), "address serving /healthz, /readyz and /metrics (off when empty) [SMCP_METRICS_LISTEN]")
		fs.StringVar(&spoolDir, "spool-dir", env("SMCP_SPOOL_DIR", ""), "directory of the blob spool, owned by the Computer: emptied at start, removed at exit (default: one of this process under $TMPDIR/smcp-spool-<uid>, where a start also removes what killed Computers left) [SMCP_SPOOL_DIR]")
		fs.Int64Var(&inlineBudget, "inline-budget", 32<<10, "largest binary item of a tool result, or skill text, sent inline to a 0.3/0.4 session; larger ones go through client:get_blob")
		for _, b := range []struct {
			p         *int64
			name, key string
			def       int64
			what      string
		}{
			{&maxMCPMessage, "max-mcp-message-bytes", "SMCP_MAX_MCP_MESSAGE_BYTES", mcpclient.DefaultMaxMessageBytes,
				"largest message an MCP server may send, the binary items of tool results apart (those go to the spool as they arrive)"},
			{&maxBlob, "max-blob-bytes", "SMCP_MAX_BLOB_BYTES", blob.DefaultMintCap,
				"largest binary item (decoded) of a tool result the spool takes; a larger one fails the call with 413"},
			{&spoolMax, "spool-max-bytes", "SMCP_SPOOL_MAX_BYTES", blob.DefaultSpoolBytes,
				"bytes the blob spool keeps on disk at most (the oldest blobs are evicted first)"},
		} {
			*b.p = b.def
			if v := env(b.key, ""); v != "" {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil || n <= 0 {
					fmt.Fprintf(stderr, "smcp-computer: %s: not a positive number: %q\n", b.key, v)
					return 2
				}
				*b.p = n
			}
			fs.Int64Var(b.p, b.name, *b.p, b.what+" ["+b.key+"]")
		}
		fs.StringVar(&landing, "landing-root", env("SMCP_LANDING_ROOT", ""), "directory client:put_blob uploads land in (uploads refused when empty) [SMCP_LANDING_ROOT]")
		fs.StringVar(&skillHome, "skill-home", env("SMCP_SKILL_HOME", ""), "skill home: its user/<skill>/SKILL.md folders are the skills offered [SMCP_SKILL_HOME]")
		fs.Var(plugins, "plugin", "NAME=DIR: a plugin whose DIR/skills/<skill>/SKILL.md are the skills NAME:<skill> (repeatable)")
		fs.StringVar(&skillSettings, "skill-settings", env("SMCP_SKILL_SETTINGS", ""), "a reference Computer's settings.json: the git marketplaces of its extraKnownMarketplaces, whose installed and enabled plugins' skills are offered [SMCP_SKILL_SETTINGS]")
		fs.StringVar(&skillCache, "skill-cache", env("SMCP_SKILL_CACHE", ""), "directory of the marketplaces' clones and the MCP servers' expanded archive skills, kept across runs (default: a new temporary directory, removed at exit) [SMCP_SKILL_CACHE]")
	case "tools":
	case "desktop":
		fs.IntVar(&size, "size", -1, "desktop_size (default: all windows)")
		fs.StringVar(&window, "window", "", "one window:// URI")
	case "finder":
		fs.StringVar(&keywords, "keywords", "", "comma-separated keywords")
		fs.StringVar(&fileType, "file-type", "", "file type filter")
		fs.IntVar(&offset, "offset", 0, "offset")
		fs.IntVar(&limit, "limit", 20, "limit (1-100)")
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "unknown command %q\n\n%s", cmd, usage)
		return 2
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, "usage of smcp-computer %s:\n", cmd)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return 0
		}
		fmt.Fprintf(stderr, "smcp-computer %s: %v (run smcp-computer %s -h)\n", cmd, err, cmd)
		return 2
	}
	var gens []protocol.Generation
	if cmd == "run" {
		var err error
		if gens, err = protocol.ParseGenerationList(versions); err != nil {
			fmt.Fprintf(stderr, "smcp-computer run: --protocol-versions: %s\n", protocol.AsError(err).Message)
			return 2
		}
	}
	log, err := c.logger(stderr)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	cfg, err := c.load()
	if err != nil {
		fmt.Fprintln(stderr, "smcp-computer:", err)
		return 2
	}
	if cmd == "run" {
		var missing []string
		for flagName, v := range map[string]string{"--server": server, "--office": office, "--name": name} {
			if v == "" {
				missing = append(missing, flagName)
			}
		}
		if len(missing) > 0 {
			fmt.Fprintf(stderr, "smcp-computer run: missing %s\n", strings.Join(missing, ", "))
			return 2
		}
	}

	// SIGINT/SIGTERM start an orderly shutdown (below).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if maxPayload < 0 || cmd == "run" && maxPayload == 0 {
		fmt.Fprintf(stderr, "smcp-computer: --max-payload-bytes must be positive, not %d\n", maxPayload)
		return 2
	}
	copts := []computer.Option{computer.WithLogger(log), computer.WithInputValues(c.values), computer.WithMaxPayloadBytes(maxPayload)}
	if cmd == "run" {
		if inlineBudget <= 0 {
			fmt.Fprintf(stderr, "smcp-computer: --inline-budget must be positive, not %d\n", inlineBudget)
			return 2
		}
		for name, v := range map[string]int64{"--max-mcp-message-bytes": maxMCPMessage, "--max-blob-bytes": maxBlob, "--spool-max-bytes": spoolMax} {
			if v <= 0 || int64(int(v)) != v {
				fmt.Fprintf(stderr, "smcp-computer: %s must be positive, not %d\n", name, v)
				return 2
			}
		}
		copts = append(copts, computer.WithSpoolDir(spoolDir), computer.WithInlineBudget(inlineBudget),
			computer.WithMaxMCPMessageBytes(int(maxMCPMessage)),
			computer.WithSpoolOptions(blob.WithMintCap(maxBlob), blob.WithMaxBytes(spoolMax)))
		if landing != "" {
			copts = append(copts, computer.WithLandingRoot(landing))
		}
		if skillHome != "" {
			copts = append(copts, computer.WithSkillHome(skillHome))
		}
		for _, n := range slices.Sorted(maps.Keys(plugins)) {
			copts = append(copts, computer.WithSkillPlugin(n, plugins[n]))
		}
		if skillSettings != "" {
			st, err := skills.ReadSettings(skillSettings)
			if err != nil {
				fmt.Fprintf(stderr, "smcp-computer: --skill-settings: %v\n", err)
				return 2
			}
			copts = append(copts, computer.WithSkillMarketplaces(st.Marketplaces()...))
		}
		if skillCache != "" {
			copts = append(copts, computer.WithSkillCacheDir(skillCache))
		}
	}
	var reg *prometheus.Registry
	if metricsListen != "" {
		reg = prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		copts = append(copts, computer.WithMetrics(reg))
	}
	comp := computer.New(cfg, copts...)
	shutdown := func() int {
		sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if err := comp.Close(sctx); err != nil {
			log.Error("shutdown incomplete", "err", err)
			return 1
		}
		return 0
	}
	start := comp.Start // one-shot: every server's first attempt
	if cmd == "run" {
		start = comp.Launch // join at once; servers come up on their own
	}
	startErr := start(ctx)
	if startErr != nil && (cmd == "run" || !serversDown(startErr)) {
		fmt.Fprintln(stderr, "smcp-computer:", startErr)
		shutdown()
		return 1
	}
	if startErr != nil {
		// Some MCP servers did not come up: say which, still show what the
		// others offer, and exit 1.
		fmt.Fprintln(stderr, "smcp-computer:", startErr)
	}

	var out any
	switch cmd {
	case "run":
		if reg != nil {
			stopOps, err := serveOps(metricsListen, comp, reg, log)
			if err != nil {
				fmt.Fprintln(stderr, "smcp-computer:", err)
				shutdown()
				return 1
			}
			defer stopOps()
		}
		opts := []sio.Option{sio.WithGenerations(gens...)}
		if apiKey != "" {
			opts = append(opts, sio.WithAPIKey(apiKey))
		}
		if err := comp.Connect(ctx, server, office, name, opts...); err != nil {
			fmt.Fprintln(stderr, "smcp-computer:", err)
			shutdown()
			return 1
		}
		log.Info("computer running", "name", name, "office", office, "server", server)
		<-ctx.Done()
		// A second signal ends the process at once (its MCP servers die
		// with it: mcpclient's parent-death signal).
		stop()
		log.Info("shutting down (a second interrupt stops at once)")
		return shutdown()
	case "tools":
		t := comp.Tools(protocol.DefaultGeneration)
		if t == nil {
			t = []protocol.SMCPTool{}
		}
		out = t
	case "desktop":
		var sz *int
		if size >= 0 {
			sz = &size
		}
		d, err := comp.Desktop(ctx, sz, window)
		if err != nil {
			fmt.Fprintln(stderr, "smcp-computer:", err)
			shutdown()
			return 1
		}
		if d == nil {
			d = []string{}
		}
		out = d
	case "finder":
		req := protocol.GetFinderReq{ReqID: "local", Offset: offset, Limit: limit}
		if keywords != "" {
			req.Keywords = strings.Split(keywords, ",")
		}
		if fileType != "" {
			req.FileType = fileType
		}
		out = comp.Finder(req)
	}
	code := shutdown()
	if startErr != nil {
		code = 1
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(stderr, "smcp-computer:", err)
		return 1
	}
	return code
}

// serversDown reports whether err is Start's report of MCP servers that
// did not come up (the others serve).
func serversDown(err error) bool {
	var se *mcpclient.ServerError
	return errors.As(err, &se)
}

// defaultGenerations is --protocol-versions' default: every generation,
// newest first (the newest is named in the handshake).
func defaultGenerations() []protocol.Generation {
	gens := protocol.Generations()
	slices.Reverse(gens)
	return gens
}
