package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/computer"
	"github.com/a2c-smcp/smcp-go/computer/config"
	"github.com/a2c-smcp/smcp-go/computer/mcpclient"
	"github.com/a2c-smcp/smcp-go/computer/sio"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/server"
)

// Names used by the demo.
const (
	office       = "quickstart"
	computerName = "quickstart-computer"
	agentName    = "quickstart-agent"
	// mcpServerName is the document server's name in the Computer's config.
	mcpServerName = "docs"
)

// Timeouts: every wait of the demo is bounded.
const (
	startTimeout   = 60 * time.Second // the Computer starting its MCP server
	connectTimeout = 10 * time.Second // one attempt to connect a role to the Server
	requestTimeout = 20 * time.Second // one Agent request
	stopTimeout    = 15 * time.Second // each part's shutdown
)

// connectAttempts bounds the attempts to connect a role to the Server and
// join the office. A fresh Socket.IO connection now and then fails in its
// first milliseconds on a loaded machine (races in the Socket.IO library);
// like any long-lived client, the demo tries again.
const connectAttempts = 3

// demo holds the parts the quickstart started; stop stops those that are
// set, last started first.
type demo struct {
	log *slog.Logger

	docs   string // the temporary copy of the documents
	apiKey string
	url    string // the Server's URL, http://127.0.0.1:PORT

	server   *server.Server
	http     *http.Server
	computer *computer.Computer
	pid      int // the document server's process
	agent    *agent.Client

	// finderUpdates receives the refreshed catalog the Agent fetches after
	// each notify:update_finder.
	finderUpdates chan *protocol.GetFinderRet
	// computerEntered receives the name of each Computer that enters the
	// office (notify:enter_office).
	computerEntered chan string
}

// copyDocuments writes the shipped documents (embedded in this program) to
// a new temporary folder, so that the demo's edit leaves the committed
// files untouched.
func (d *demo) copyDocuments(docs fs.FS) error {
	dir, err := os.MkdirTemp("", "smcp-quickstart-")
	if err != nil {
		return err
	}
	d.docs = dir
	if err := os.CopyFS(dir, docs); err != nil {
		return fmt.Errorf("copy the documents: %w", err)
	}
	return nil
}

// startServer runs the signalling Server on a free loopback port with an API
// key made for this run.
func (d *demo) startServer() error {
	d.apiKey = rand.Text()
	srv, err := server.New(server.WithAPIKeys(d.apiKey), server.WithLogger(d.log))
	if err != nil {
		return err
	}
	d.server = srv
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/socket.io/", srv.Handler())
	d.http = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := d.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			d.log.Error("http server stopped", "err", err)
		}
	}()
	d.url = "http://" + ln.Addr().String()
	return nil
}

// startComputer starts a Computer whose only MCP server is smcp-docserver
// over the copied documents, run as a child process speaking MCP over
// stdio, and connects it to the Server's office.
func (d *demo) startComputer(ctx context.Context) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	// The config has the format of a Computer's config file (the Python
	// SDK's): one stdio MCP server. Its command is this very program, which
	// becomes smcp-docserver when docserverEnv is set (see docserver.go).
	raw, err := json.Marshal(map[string]any{
		"type": "stdio",
		"name": mcpServerName,
		"server_parameters": map[string]any{
			"command": self,
			"args":    []string{"--root", d.docs, "--debounce", "50ms"},
			"env":     map[string]string{docserverEnv: "1"},
		},
	})
	if err != nil {
		return err
	}
	cfg, err := config.Parse(raw)
	if err != nil {
		return err
	}

	startCtx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	d.computer = computer.New(cfg, computer.WithLogger(d.log))
	if err := d.computer.Start(startCtx); err != nil {
		return err
	}
	st, err := d.docserverStatus()
	if err != nil {
		return err
	}
	d.pid = st.PID
	return retry(ctx, d.log, "connecting the Computer", func(ctx context.Context) error {
		return d.computer.Connect(ctx, d.url, office, computerName, sio.WithAPIKey(d.apiKey))
	})
}

// docserverStatus checks that the document server came up.
func (d *demo) docserverStatus() (mcpclient.Status, error) {
	for _, st := range d.computer.Status() {
		if st.Name != mcpServerName {
			continue
		}
		if st.State != mcpclient.StateUp {
			return st, fmt.Errorf("the document server did not start (state %s): %s", st.State, st.Err)
		}
		return st, nil
	}
	return mcpclient.Status{}, fmt.Errorf("the Computer has no MCP server %q", mcpServerName)
}

// startAgent connects an Agent to the Server, joins the office and waits
// for the Computer to be there. The Agent re-fetches the catalog after every
// notify:update_finder and hands it to finderUpdates.
func (d *demo) startAgent(ctx context.Context) error {
	d.finderUpdates = make(chan *protocol.GetFinderRet, 16)
	d.computerEntered = make(chan string, 16)
	onFinderChanged := func(computer string, catalog *protocol.GetFinderRet) {
		select {
		case d.finderUpdates <- catalog:
		default: // nobody is reading: keep going
		}
	}
	onEnterOffice := func(n protocol.EnterOfficeNotification) {
		if n.Computer == nil {
			return
		}
		select {
		case d.computerEntered <- *n.Computer:
		default:
		}
	}
	err := retry(ctx, d.log, "connecting the Agent", func(ctx context.Context) error {
		ag, err := agent.Dial(ctx, d.url,
			agent.WithAPIKey(d.apiKey),
			agent.WithName(agentName),
			agent.WithLogger(d.log),
			agent.WithTimeout(requestTimeout),
			agent.OnFinderChanged(onFinderChanged),
			agent.OnEnterOffice(onEnterOffice))
		if err != nil {
			return err
		}
		if err := ag.JoinOffice(ctx, office); err != nil {
			_ = ag.Close()
			return err
		}
		d.agent = ag
		return nil
	})
	if err != nil {
		return err
	}
	return d.waitForComputer(ctx)
}

// waitForComputer returns once the Computer is in the office: it is listed
// (server:list_room) or enters it (notify:enter_office), for instance after
// its connection had to be made again.
func (d *demo) waitForComputer(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	sessions, err := d.agent.ListRoom(ctx)
	if err != nil {
		return err
	}
	if slices.Contains(agent.ComputerNames(sessions), computerName) {
		return nil
	}
	d.log.Warn("the Computer is not in the office yet; waiting for it", "computer", computerName)
	for {
		select {
		case name := <-d.computerEntered:
			if name == computerName {
				return nil
			}
		case <-ctx.Done():
			return fmt.Errorf("the Computer %q did not enter the office: %w", computerName, ctx.Err())
		}
	}
}

// retry runs connect up to connectAttempts times, each attempt bounded by
// connectTimeout, until it succeeds. A refused API key is not retried.
func retry(ctx context.Context, log *slog.Logger, what string, connect func(context.Context) error) error {
	var err error
	for attempt := 1; attempt <= connectAttempts; attempt++ {
		attemptCtx, cancel := context.WithTimeout(ctx, connectTimeout)
		err = connect(attemptCtx)
		cancel()
		if err == nil || ctx.Err() != nil || protocol.CodeOf(err) == protocol.CodeUnauthorized {
			return err
		}
		log.Warn(what+" failed; trying again", "attempt", attempt, "err", err)
	}
	return err
}

// stop closes the Agent, the Computer (which stops the document server's
// process), the Server, and removes the temporary documents.
func (d *demo) stop() error {
	var errs []error
	if d.agent != nil {
		errs = append(errs, d.agent.Close())
	}
	if d.computer != nil {
		ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		if err := d.computer.Close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("stop the Computer: %w", err))
		}
		cancel()
	}
	if d.server != nil {
		ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		if err := d.server.Close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("stop the Server: %w", err))
		}
		cancel()
	}
	if d.http != nil {
		ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		if err := d.http.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("stop the HTTP server: %w", err))
		}
		cancel()
	}
	if d.docs != "" {
		errs = append(errs, os.RemoveAll(d.docs))
	}
	return errors.Join(errs...)
}
