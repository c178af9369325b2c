package server

import (
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
)

// This file holds the Server's write batching and read buffering below the
// websocket library (docs/performance.md, "Second round").
//
// The Engine.IO transport writes every packet as its own websocket message,
// and gorilla/websocket, with the 1 KB write buffer the library configures,
// splits every message larger than that into 1 KB frames, each written to
// the connection with a write(2) of its own: a 1 KB tool answer took two
// system calls, a 9 KB tool list nine. A system call on a loopback or LAN
// socket costs more than the routing itself, and it was the largest single
// cost of the routed path (a quarter of the Server's CPU at 32 requests in
// flight).
//
// batchedConn sits between the websocket library and the hijacked TCP
// connection (it also buffers reads, see Read below). Write copies the frame into a pending buffer and returns; a
// flusher goroutine, started when the buffer goes from empty to non-empty
// and gone once it is empty again, writes everything pending with one
// write(2). Whatever the library writes while the flusher waits for the CPU
// (the other frames of the message, the answers of a whole read batch) goes
// out in the same system call. Nothing is delayed on purpose: the flusher
// runs as soon as the scheduler gets to it.
//
// Limits: at most maxPendingWrite bytes wait; a Write beyond that blocks
// until the flusher has handed the buffer to the kernel, so a peer that
// stops reading stalls the library's writer exactly as a full socket buffer
// did before (the Server's outgoing limit then applies, spec/protocol.md,
// Limits). An idle connection holds no buffer and no goroutine. A write
// error is returned by every later Write. Close lets the flusher write what
// is pending, for at most closeFlushWait, then closes the connection.

const (
	// maxPendingWrite bounds the bytes waiting for the flusher per
	// connection.
	maxPendingWrite = 64 << 10
	// closeFlushWait bounds how long a closed connection's pending bytes
	// may take to reach the kernel.
	closeFlushWait = 2 * time.Second
	// pooledWriteBuffer is the capacity of the pending buffers kept for
	// reuse; larger ones (a message bigger than that) are dropped.
	pooledWriteBuffer = 2 * maxPendingWrite
)

// writeBuffers holds the pending buffers of flushers that ended, for the
// next burst of any connection: an idle connection holds none.
var writeBuffers = sync.Pool{New: func() any {
	b := make([]byte, 0, 2<<10) // grows with use; a burst of handshakes needs little
	return &b
}}

// readBuffers holds the read buffers of connections whose buffered bytes
// were all consumed.
var readBuffers = sync.Pool{New: func() any {
	b := make([]byte, readBufferSize)
	return &b
}}

// readBufferSize is how much one read(2) takes from the kernel.
const readBufferSize = 32 << 10

// batchedConn is a new websocket connection as the library sees it.
type batchedConn struct {
	net.Conn
	release <-chan struct{} // reads wait until it is closed (serveHoldingReads); nil after
	raw     syscall.RawConn // nil when the connection has no file descriptor (TLS)

	// Read side, used by the connection's single reader.
	rbuf *[]byte // bytes read from the kernel and not yet consumed; nil when none
	roff int
	busy bool // the last read filled its buffer: read through a pooled one

	mu       sync.Mutex
	room     sync.Cond // signalled when pending shrinks, fails or closes
	pending  *[]byte   // nil while nothing waits
	flushing bool      // a flusher goroutine owns the connection's writes
	err      error     // the first write error; every later Write returns it
	closed   bool
	deadline time.Time // the write deadline last passed to Conn
}

func newBatchedConn(c net.Conn) *batchedConn {
	b := &batchedConn{Conn: c}
	b.room.L = &b.mu
	if sc, ok := c.(syscall.Conn); ok {
		if raw, err := sc.SyscallConn(); err == nil {
			b.raw = raw
		}
	}
	return b
}

// Read serves the websocket library's small reads (its buffer is 1 KB, so a
// 1 KB message took two or three read(2)) from one larger read of what the
// kernel holds, once the connection is busy (its last read filled the
// buffer it was given). The larger buffer is taken from a pool only once the
// connection is readable, inside the runtime's readiness callback, and
// returned once consumed: a connection waiting for data holds none, and a
// quiet one never takes one, so idle connections cost nothing more.
//
// The frame of this method is kept small (the buffered paths are separate,
// not inlined functions): the reader goroutine rests here, and a resting
// stack under a quarter of 8 KB is halved to 4 KB by the collector, 4 KB
// less per idle connection (https://github.com/a2c-smcp/smcp-go/blob/main/spec/decisions.md#idle-memory-per-connection).
func (b *batchedConn) Read(p []byte) (int, error) {
	if b.rbuf != nil {
		return b.readPending(p)
	}
	if b.release != nil {
		<-b.release
		b.release = nil
	}
	if b.raw == nil || len(p) >= readBufferSize || !b.busy {
		// A connection that is not busy reads into the caller's buffer:
		// handshakes and occasional small messages never take a pooled one.
		n, err := b.Conn.Read(p)
		b.busy = n == len(p) // the read filled p: more is probably waiting
		return n, err
	}
	return b.readBuffered(p)
}

// readBuffered reads through a pooled buffer (see Read).
//
//go:noinline
func (b *batchedConn) readBuffered(p []byte) (int, error) {
	var (
		buf  *[]byte
		n    int
		rerr error
	)
	err := b.raw.Read(func(fd uintptr) bool {
		buf = readBuffers.Get().(*[]byte)
		for {
			n, rerr = syscall.Read(int(fd), (*buf)[:readBufferSize])
			if rerr != syscall.EINTR {
				break
			}
		}
		if rerr == syscall.EAGAIN {
			readBuffers.Put(buf)
			buf = nil
			return false // wait until readable, then try again
		}
		return true
	})
	switch {
	case err != nil: // closed, or past the read deadline
		if buf != nil {
			readBuffers.Put(buf)
		}
		return 0, err
	case rerr != nil:
		readBuffers.Put(buf)
		return 0, &net.OpError{Op: "read", Net: b.LocalAddr().Network(), Source: b.LocalAddr(), Addr: b.RemoteAddr(), Err: os.NewSyscallError("read", rerr)}
	case n <= 0:
		readBuffers.Put(buf)
		return 0, io.EOF
	}
	b.busy = n == readBufferSize
	*buf = (*buf)[:n]
	c := copy(p, *buf)
	if c == n {
		releaseReadBuffer(buf)
	} else {
		b.rbuf, b.roff = buf, c
	}
	return c, nil
}

func releaseReadBuffer(buf *[]byte) {
	*buf = (*buf)[:readBufferSize]
	readBuffers.Put(buf)
}

// Write queues p for the flusher.
func (b *batchedConn) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.err == nil && !b.closed && b.pending != nil && len(*b.pending) >= maxPendingWrite {
		b.room.Wait()
	}
	switch {
	case b.closed:
		return 0, net.ErrClosed
	case b.err != nil:
		return 0, b.err
	}
	if b.pending == nil {
		b.pending = writeBuffers.Get().(*[]byte)
	}
	*b.pending = append(*b.pending, p...)
	if !b.flushing {
		b.flushing = true
		go b.flush()
	}
	return len(p), nil
}

// flush writes what is pending until nothing is, then exits.
func (b *batchedConn) flush() {
	b.mu.Lock()
	for b.pending != nil && b.err == nil {
		buf := b.pending
		b.pending = nil
		b.room.Broadcast() // room for a writer waiting on a full buffer
		b.mu.Unlock()
		_, err := b.Conn.Write(*buf)
		releaseWriteBuffer(buf)
		b.mu.Lock()
		if err != nil {
			b.err = err
			b.room.Broadcast()
		}
	}
	if b.pending != nil { // a write failed: what waits is lost with the connection
		releaseWriteBuffer(b.pending)
		b.pending = nil
	}
	b.flushing = false
	closeNow := b.closed
	b.room.Broadcast()
	b.mu.Unlock()
	if closeNow {
		_ = b.Conn.Close()
	}
}

func releaseWriteBuffer(buf *[]byte) {
	if cap(*buf) > pooledWriteBuffer {
		return
	}
	*buf = (*buf)[:0]
	writeBuffers.Put(buf)
}

// SetWriteDeadline passes a changed deadline on to the connection, where
// it bounds the flusher's writes.
func (b *batchedConn) SetWriteDeadline(t time.Time) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil // the deadline Close set bounds the last flush
	}
	if t.Equal(b.deadline) {
		return nil // the library sets the same (zero) deadline before every frame
	}
	b.deadline = t
	return b.Conn.SetWriteDeadline(t)
}

// SetDeadline sets both deadlines, the write one through SetWriteDeadline.
func (b *batchedConn) SetDeadline(t time.Time) error {
	if err := b.SetWriteDeadline(t); err != nil {
		return err
	}
	return b.Conn.SetReadDeadline(t)
}

// Close closes the connection once the flusher, if one runs, has written
// what is pending (for at most closeFlushWait). Reads end at once.
func (b *batchedConn) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return net.ErrClosed
	}
	b.closed = true
	b.room.Broadcast()
	if !b.flushing {
		b.mu.Unlock()
		return b.Conn.Close()
	}
	b.deadline = time.Now().Add(closeFlushWait)
	_ = b.Conn.SetWriteDeadline(b.deadline)
	b.mu.Unlock()
	_ = b.Conn.SetReadDeadline(time.Now())
	return nil
}

// readPending serves p from what an earlier read left (see Read).
//
//go:noinline
func (b *batchedConn) readPending(p []byte) (int, error) {
	n := copy(p, (*b.rbuf)[b.roff:])
	b.roff += n
	if b.roff == len(*b.rbuf) {
		releaseReadBuffer(b.rbuf)
		b.rbuf = nil
	}
	return n, nil
}
