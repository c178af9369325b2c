package server

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// tcpPair returns both ends of a real loopback TCP connection.
func tcpPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	select {
	case server = <-accepted:
	case <-time.After(5 * time.Second):
		t.Fatal("no accept")
	}
	require.NotNil(t, server)
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

func (b *batchedConn) idle() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return !b.flushing && b.pending == nil
}

func TestBatchedConnDeliversInOrderAndGoesIdle(t *testing.T) {
	c, peer := tcpPair(t)
	b := newBatchedConn(c)
	var want bytes.Buffer
	got := make(chan []byte, 1)
	go func() {
		data, _ := io.ReadAll(peer)
		got <- data
	}()
	for i := 0; i < 20000; i++ {
		chunk := bytes.Repeat([]byte{byte('a' + i%26)}, 1+i%1500)
		want.Write(chunk)
		n, err := b.Write(chunk)
		require.NoError(t, err)
		require.Equal(t, len(chunk), n)
	}
	require.Eventually(t, b.idle, 5*time.Second, time.Millisecond, "the flusher must end once nothing is pending")
	require.NoError(t, b.Close())
	select {
	case data := <-got:
		require.True(t, bytes.Equal(want.Bytes(), data), "got %d bytes, want %d", len(data), want.Len())
	case <-time.After(10 * time.Second):
		t.Fatal("peer did not see the end of the stream")
	}
	_, err := b.Write([]byte("x"))
	require.ErrorIs(t, err, net.ErrClosed)
}

func TestBatchedConnCloseWritesWhatIsPending(t *testing.T) {
	c, peer := tcpPair(t)
	b := newBatchedConn(c)
	msg := bytes.Repeat([]byte("z"), 3*maxPendingWrite)
	for off := 0; off < len(msg); off += 1000 {
		_, err := b.Write(msg[off:min(off+1000, len(msg))])
		require.NoError(t, err)
	}
	require.NoError(t, b.Close())
	require.NoError(t, peer.SetReadDeadline(time.Now().Add(10*time.Second)))
	data, err := io.ReadAll(peer)
	require.NoError(t, err)
	require.Equal(t, len(msg), len(data))
}

// A peer that never reads: the writer blocks once the kernel's buffers and
// maxPendingWrite are full (memory stays bounded), and Close releases it
// with an error and closes the connection within closeFlushWait.
func TestBatchedConnPeerNotReading(t *testing.T) {
	c, peer := tcpPair(t)
	// Small kernel buffers, so that they fill at once.
	require.NoError(t, c.(*net.TCPConn).SetWriteBuffer(8<<10))
	require.NoError(t, peer.(*net.TCPConn).SetReadBuffer(8<<10))
	b := newBatchedConn(c)
	written := make(chan int64, 1)
	werr := make(chan error, 1)
	go func() {
		var n int64
		chunk := make([]byte, 1024)
		for {
			if _, err := b.Write(chunk); err != nil {
				written <- n
				werr <- err
				return
			}
			n += int64(len(chunk))
		}
	}()
	// The writer stalls: the count stops growing.
	var last int64 = -1
	require.Eventually(t, func() bool {
		b.mu.Lock()
		full := b.pending != nil && len(*b.pending) >= maxPendingWrite
		b.mu.Unlock()
		return full
	}, 30*time.Second, 10*time.Millisecond)
	b.mu.Lock()
	if b.pending != nil {
		require.LessOrEqual(t, len(*b.pending), maxPendingWrite+1024, "pending bytes are bounded")
	}
	b.mu.Unlock()
	start := time.Now()
	require.NoError(t, b.Close())
	select {
	case err := <-werr:
		require.True(t, errors.Is(err, net.ErrClosed), "got %v", err)
		last = <-written
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not release the blocked writer")
	}
	require.Positive(t, last)
	// The connection ends within the flush bound: the peer, reading now,
	// sees EOF or a reset, not a connection held open.
	require.NoError(t, peer.SetReadDeadline(time.Now().Add(closeFlushWait+5*time.Second)))
	_, err := io.Copy(io.Discard, peer)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("connection still open %s after Close", time.Since(start))
	}
	require.Eventually(t, b.idle, closeFlushWait+5*time.Second, 10*time.Millisecond)
}

func TestBatchedConnReads(t *testing.T) {
	c, peer := tcpPair(t)
	b := newBatchedConn(c)
	require.NotNil(t, b.raw, "a TCP connection reads through its file descriptor")
	var want bytes.Buffer
	go func() {
		for i := 0; i < 3000; i++ {
			chunk := bytes.Repeat([]byte{byte('A' + i%26)}, 1+(i*37)%3000)
			want.Write(chunk)
			if _, err := peer.Write(chunk); err != nil {
				return
			}
		}
		peer.Close()
	}()
	var got bytes.Buffer
	p := make([]byte, 1024) // the websocket library's read size
	for {
		n, err := b.Read(p)
		got.Write(p[:n])
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
	}
	require.True(t, bytes.Equal(want.Bytes(), got.Bytes()), "got %d bytes, want %d", got.Len(), want.Len())
	require.Nil(t, b.rbuf, "a drained connection holds no read buffer")
}

func TestBatchedConnReadDeadline(t *testing.T) {
	c, _ := tcpPair(t)
	b := newBatchedConn(c)
	require.NoError(t, b.SetReadDeadline(time.Now().Add(50*time.Millisecond)))
	_, err := b.Read(make([]byte, 1024))
	var ne net.Error
	require.True(t, errors.As(err, &ne) && ne.Timeout(), "got %v", err)
	require.Nil(t, b.rbuf)
	// Close ends a blocked read at once.
	require.NoError(t, b.SetReadDeadline(time.Time{}))
	done := make(chan error, 1)
	go func() {
		_, err := b.Read(make([]byte, 1024))
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	require.NoError(t, b.Close())
	select {
	case err := <-done:
		require.Error(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end the read")
	}
}
