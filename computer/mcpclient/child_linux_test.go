package mcpclient

import (
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/computer/internal/testmcp"
	"github.com/stretchr/testify/require"
)

// Pdeathsig fires when the thread that forked the child exits. A caller
// whose goroutine is locked to its thread and then exits (which ends the
// thread) must not take the child with it: the child is forked from
// spawn's own locked goroutine, which lives until the child is reaped.
func TestChildOutlivesTheCallersThread(t *testing.T) {
	bin := testmcp.Binary(t)
	type started struct {
		ch  *child
		tid int
		err error
	}
	threadGone := func(tid int) bool {
		deadline := time.Now().Add(2 * time.Second)
		for time.Now().Before(deadline) {
			if _, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", tid)); os.IsNotExist(err) {
				return true
			}
			time.Sleep(5 * time.Millisecond)
		}
		return false
	}
	// The runtime never ends the main thread: a caller that ran there
	// proves nothing, so try again from another goroutine.
	for attempt := 0; attempt < 5; attempt++ {
		res := make(chan started, 1)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
			ch, err := startChild(exec.Command(bin), "t", slog.New(slog.DiscardHandler), 0, nil)
			res <- started{ch, syscall.Gettid(), err}
		}()
		s := <-res
		require.NoError(t, s.err)
		if !threadGone(s.tid) {
			require.NoError(t, s.ch.stop())
			continue
		}
		defer s.ch.stop()
		select {
		case <-s.ch.exited:
			t.Fatalf("the child died with its caller's thread: %s", s.ch.status())
		case <-time.After(300 * time.Millisecond):
		}
		return
	}
	t.Fatal("no caller thread ended")
}
