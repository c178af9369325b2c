package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/computer"
	"github.com/a2c-smcp/smcp-go/computer/config"
	"github.com/a2c-smcp/smcp-go/computer/sio"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/server"
)

type notes struct {
	mu  sync.Mutex
	got []agent.Notification
}

func (n *notes) add(x agent.Notification) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.got = append(n.got, x)
}

func (n *notes) has(event, computer, agentName string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, x := range n.got {
		if x.Event == event && x.Computer == computer && x.Agent == agentName {
			return true
		}
	}
	return false
}

// Office rules with real roles (spec/protocol.md, Offices and Routed requests).
func TestOffices(t *testing.T) {
	d := startServer(t)
	var seen notes
	bot := dialAgent(t, d, "o1", "bot", agent.OnNotification(seen.add))
	ctx := testContext(t)

	// A Computer entering and leaving is announced to the office.
	startComputer(t, d, "o1", "desk", []mcpServer{toolServer(t, "tools")})
	require.Eventually(t, func() bool { return seen.has(protocol.NotifyEnterOffice, "desk", "") }, 10*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool { _, ok := bot.Tools("desk"); return ok }, 10*time.Second, 10*time.Millisecond,
		"the Agent fetches an entering Computer's tools")
	other := startComputer(t, d, "o2", "far", []mcpServer{toolServer(t, "tools")})

	// A second Agent cannot join an office that has one (4101).
	intruder := dialAgent(t, d, "", "intruder")
	err := intruder.JoinOffice(ctx, "o1")
	assert.Equal(t, protocol.CodeRoomFull, protocol.CodeOf(err), "%v", err)

	// An Agent outside any office cannot route requests (4103).
	_, err = intruder.GetTools(ctx, "desk")
	assert.Equal(t, protocol.CodeNotInRoom, protocol.CodeOf(err), "%v", err)

	// A Computer of another office is out of reach, answered as a name that
	// exists nowhere (404, the same message), so nothing leaks across offices.
	_, err = bot.GetTools(ctx, "far")
	assert.Equal(t, protocol.CodeNotFound, protocol.CodeOf(err), "%v", err)
	_, nowhere := bot.GetTools(ctx, "nowhere")
	assert.Equal(t, strings.ReplaceAll(nowhere.Error(), "nowhere", "far"), err.Error())

	// The Agent of office o2 reaches its own Computer.
	require.NoError(t, intruder.JoinOffice(ctx, "o2"))
	tools, err := intruder.GetTools(ctx, "far")
	require.NoError(t, err)
	assert.NotEmpty(t, tools)

	// Closing a Computer announces its leave, and requests to it fail with 404.
	require.NoError(t, other.Close(ctx))
	_, err = intruder.GetTools(ctx, "far")
	assert.Equal(t, protocol.CodeNotFound, protocol.CodeOf(err), "%v", err)

	// Leaving frees the office for another Agent.
	require.NoError(t, intruder.LeaveOffice(ctx))
	third := dialAgent(t, d, "o2", "third")
	assert.Equal(t, "o2", third.Office())
}

// TestJoinRetriedWhenOfficeBusy: a fleet of Computers starting at once can
// spend an office's event budget (4 × the Server's per-session event rate a
// second); the join that finds it spent is refused with 429. A Computer
// retries such a join, jittered, even the first one, instead of failing
// its Dial as it does for a lasting refusal (a name taken, a full office).
func TestJoinRetriedWhenOfficeBusy(t *testing.T) {
	d := startServer(t, server.WithMaxEventRate(1)) // the office's budget: 4 a second, bursts of 8
	cfg, err := config.Parse([]byte("[]"))
	require.NoError(t, err)
	ctx := testContext(t)
	const fleet = 16
	cs := make([]*computer.Computer, fleet)
	errs := make(chan error, fleet)
	for i := range cs {
		cs[i] = computer.New(cfg, computer.WithLogger(logger(t)))
		require.NoError(t, cs[i].Start(ctx))
		t.Cleanup(func() {
			closeCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = cs[i].Close(closeCtx)
		})
	}
	for i, c := range cs { // all at once: the budget's burst is spent
		go func() {
			errs <- c.Connect(ctx, d.URL, "o1", fmt.Sprint("c", i), sio.WithAPIKey(d.APIKey), sio.WithLogger(logger(t)))
		}()
	}
	for range cs {
		require.NoError(t, <-errs, "a Computer's Dial failed on a busy office")
	}
	for _, c := range cs {
		require.True(t, c.Client().Joined())
	}

	// A lasting refusal still fails the first join at once: the name is
	// taken.
	time.Sleep(2 * time.Second) // the budget refills
	_, err = sio.Dial(ctx, d.URL, "o1", "c0", nil, sio.WithAPIKey(d.APIKey), sio.WithLogger(logger(t)))
	require.Error(t, err)
	code := protocol.CodeOf(err)
	require.NotContains(t, []protocol.Code{protocol.CodeTooManyRequests, protocol.CodeTimeout}, code,
		"a lasting refusal is answered as such, not retried until Dial's timeout: %v", err)
	t.Logf("a second Computer named c0: %v", err)
}
