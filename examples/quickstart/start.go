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
	requestTimeout = 20 * time.Second // one Agent request
	stopTimeout    = 15 * time.Second // each part's shutdown
)

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

	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	d.computer = computer.New(cfg, computer.WithLogger(d.log))
	if err := d.computer.Start(ctx); err != nil {
		return err
	}
	st, err := d.docserverStatus()
	if err != nil {
		return err
	}
	d.pid = st.PID
	return d.computer.Connect(ctx, d.url, office, computerName, sio.WithAPIKey(d.apiKey))
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

// startAgent connects an Agent to the Server and joins the office. The
// Agent re-fetches the catalog after every notify:update_finder and hands
// it to finderUpdates.
func (d *demo) startAgent(ctx context.Context) error {
	d.finderUpdates = make(chan *protocol.GetFinderRet, 16)
	onFinderChanged := func(computer string, catalog *protocol.GetFinderRet) {
		select {
		case d.finderUpdates <- catalog:
		default: // nobody is reading: keep going
		}
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	ag, err := agent.Dial(ctx, d.url,
		agent.WithAPIKey(d.apiKey),
		agent.WithName(agentName),
		agent.WithLogger(d.log),
		agent.WithTimeout(requestTimeout),
		agent.OnFinderChanged(onFinderChanged))
	if err != nil {
		return err
	}
	d.agent = ag
	return ag.JoinOffice(ctx, office)
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
