package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/a2c-smcp/smcp-go/server"
)

// ExampleNew mounts the Server on the application's own mux next to a
// health probe, and shuts it down gracefully.
func ExampleNew() {
	srv, err := server.New(
		server.WithAPIKeys("change-me"),               // the default provider reads x-api-key or auth.api_key
		server.WithRequestTimeout(20*time.Second),     // routed requests other than client:tool_call
		server.WithCORSOrigins("https://app.example"), // browsers on this origin may connect
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	mux := http.NewServeMux()
	mux.Handle("/socket.io/", srv.Handler()) // Agents and Computers connect to <base>/smcp
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") })
	// In production: (&http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}).ListenAndServe()
	hs := httptest.NewServer(mux)

	resp, err := http.Get(hs.URL + "/socket.io/?EIO=4&transport=polling")
	if err == nil {
		fmt.Println("engine handshake:", resp.StatusCode)
		_ = resp.Body.Close()
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	fmt.Println("close:", srv.Close(ctx))
	hs.Close()
	// Output:
	// engine handshake: 200
	// close: <nil>
}

// ExampleNew_noAuth shows that a Server never starts open by accident.
func ExampleNew_noAuth() {
	_, err := server.New()
	fmt.Println(err)
	// Output:
	// server: no authentication configured: use WithAPIKeys(keys...), WithKeys(keys...) or WithAuth(provider); WithAuth(InsecureNoAuth()) accepts everyone
}
