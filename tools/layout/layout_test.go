package layout

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestViolations(t *testing.T) {
	tests := []struct {
		module string
		deps   []string
		test   []string
		want   int
	}{
		{"agent", []string{Repo + "/protocol", Repo + "/protocol/dpe", "github.com/zishang520/socket.io/clients/socket/v3"}, nil, 0},
		{"agent", []string{Repo + "/server"}, nil, 1},
		{"computer", []string{Repo + "/agent/internal/x", Repo + "/server"}, nil, 2},
		{"server", []string{Repo + "/serverless"}, nil, 0}, // a prefix is not a parent
		{"protocol", []string{"net/url", "encoding/json"}, nil, 0},
		{"protocol", []string{"net/http", "github.com/mark3labs/mcp-go/mcp"}, nil, 2},
		{"protocol", []string{"net/url"}, []string{"net/http/httptest"}, 0},
		{"protocol", []string{"net/url"}, []string{"github.com/zishang520/socket.io/v3/pkg/types"}, 1},
		{"agent", nil, []string{Repo + "/computer"}, 1},
		{"protocol", []string{Repo + "/computer/finder"}, nil, 1},
		{"dpekit", []string{"github.com/mark3labs/mcp-go/server", Repo + "/protocol"}, nil, 0},
		{"dpekit", []string{Repo + "/computer"}, nil, 1},
		{"e2e", []string{Repo + "/server", Repo + "/computer", Repo + "/agent"}, nil, 0},
		{"inspector", []string{Repo + "/agent", Repo + "/protocol"}, []string{Repo + "/server", Repo + "/computer/config"}, 0},
		{"inspector", []string{Repo + "/agent", Repo + "/computer/config"}, nil, 1},
	}
	for _, tt := range tests {
		got := Violations(tt.module, tt.deps, tt.test)
		assert.Len(t, got, tt.want, "%s %v: %v", tt.module, tt.deps, got)
	}
}

func TestClientViolations(t *testing.T) {
	assert.Empty(t, ClientViolations("agent", []string{Repo + "/sio", "github.com/gorilla/websocket", "github.com/zishang520/socket.io/v3/pkg/log"}))
	got := ClientViolations("agent", []string{
		"github.com/zishang520/socket.io/servers/socket/v3",
		"github.com/quic-go/quic-go/http3",
		"github.com/quic-go/webtransport-go",
		"github.com/zishang520/socket.io/v3/pkg/webtransport",
		"github.com/quic-go/quic-gopher", // a prefix is not a parent
	})
	assert.Len(t, got, 4, "%v", got)
}
