package socket

import "testing"

// smcp-go patch 17: a CONNECT_ERROR without data (the Python Socket.IO
// server's {"message": "Connection refused by server"}) keeps its message.
func TestProcessExtendedErrorWithoutData(t *testing.T) {
	e, err := processExtendedError(map[string]any{"message": "Connection refused by server"})
	if err != nil {
		t.Fatalf("refusal without data: %v", err)
	}
	if e.Message != "Connection refused by server" || e.Data != nil {
		t.Fatalf("got %#v", e)
	}
	if _, err := processExtendedError(map[string]any{"data": 1}); err == nil {
		t.Fatal("a refusal without a message is not one")
	}
}
