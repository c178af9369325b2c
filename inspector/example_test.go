package inspector_test

import (
	"context"
	"log"
	"net/http"
	"time"

	"github.com/a2c-smcp/smcp-go/inspector"
)

// Serve the inspector's page for an office on loopback.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	in, err := inspector.Dial(ctx, "http://127.0.0.1:8080", "my-office", inspector.WithAPIKey("my-key"))
	if err != nil {
		log.Fatal(err) // a *protocol.Error: 4101 when the office already has its Agent
	}
	defer in.Close()
	srv := &http.Server{Addr: "127.0.0.1:7780", Handler: in.Handler(), ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}
