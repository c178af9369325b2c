package blob

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
)

// The references' thresholds (spec/capabilities.md, Blobs).
const (
	// DefaultInlineBudget is the largest binary item that travels inline.
	DefaultInlineBudget = 32 << 10
	// DefaultMintCap is the largest binary item moved to the spool; a
	// bigger one stays inline.
	DefaultMintCap = 100 << 20
	// MaxChunkBytes is the largest chunk of a client:get_blob answer.
	MaxChunkBytes = 256 << 10
	// DefaultSpoolBytes bounds the bytes a Spool keeps on disk.
	DefaultSpoolBytes = 1 << 30
	// DefaultLifetime is how long a minted handle is served.
	DefaultLifetime = 15 * time.Minute
)

// Keys of a content item's metadata that carry a blob sideband.
const (
	MetaBlobHandle = "a2c_blob_handle"
	MetaTotalSize  = "a2c_total_size"
	MetaSHA256     = "a2c_sha256"
)

// handlePrefix starts every handle this package mints; the rest is 43
// characters of unpadded base64url (32 random bytes).
const handlePrefix = "sp1."

// markerName marks a directory as a spool's own, so that opening a spool
// never empties a directory that is not one.
const markerName = ".smcp-spool"

// Clock returns the current time; WithClock injects one in tests.
type Clock func() time.Time

// SpoolOption configures a Spool.
type SpoolOption func(*spoolConfig)

type spoolConfig struct {
	inline, mintCap, maxBytes int64
	lifetime                  time.Duration
	now                       Clock
}

// WithInlineBudget sets the largest binary item kept inline (default
// DefaultInlineBudget); n ≤ 0 keeps the default.
func WithInlineBudget(n int64) SpoolOption {
	return func(c *spoolConfig) { keepPositive(&c.inline, n) }
}

// WithMintCap sets the largest binary item moved to the spool (default
// DefaultMintCap); n ≤ 0 keeps the default.
func WithMintCap(n int64) SpoolOption {
	return func(c *spoolConfig) { keepPositive(&c.mintCap, n) }
}

// WithMaxBytes bounds the spool's bytes on disk (default
// DefaultSpoolBytes); n ≤ 0 keeps the default.
func WithMaxBytes(n int64) SpoolOption {
	return func(c *spoolConfig) { keepPositive(&c.maxBytes, n) }
}

// WithLifetime sets how long a handle is served after it was minted
// (default DefaultLifetime); d ≤ 0 keeps the default.
func WithLifetime(d time.Duration) SpoolOption {
	return func(c *spoolConfig) { keepPositive(&c.lifetime, d) }
}

// WithClock sets the clock lifetimes are measured with (default
// time.Now).
func WithClock(now Clock) SpoolOption {
	return func(c *spoolConfig) {
		if now != nil {
			c.now = now
		}
	}
}

// Spool keeps the blobs minted from tool results until they are read,
// expire or are evicted. It is safe for concurrent use.
type Spool struct {
	cfg  spoolConfig
	dir  string
	root *os.Root
	lock *os.File // the marker, locked while the spool is open

	mu      sync.Mutex
	entries map[string]*entry
	total   int64
	seq     uint64
	closed  bool

	stop chan struct{}
	done chan struct{}
}

type entry struct {
	office, mime, sha string
	size              int64
	minted, expires   time.Time
	seq               uint64
	file              string
	// staged: written by Stage, not yet claimed by Mint for an office;
	// Read answers gone for it.
	staged bool
}

// OpenSpool opens a spool in dir, which it creates when missing and owns:
// a directory that is not empty and not a spool's (it has no
// ".smcp-spool" marker) is refused, as is one another live spool holds (it
// keeps its marker locked while it is open), and what a previous process
// left in a spool's directory is removed. dir "" makes a new directory of
// this process under a per-user base directory (DefaultBase), after
// removing there what spools of processes that are gone left (killed,
// crashed), never a live one's. Close removes the directory.
func OpenSpool(dir string, opts ...SpoolOption) (*Spool, error) {
	cfg := spoolConfig{inline: DefaultInlineBudget, mintCap: DefaultMintCap, maxBytes: DefaultSpoolBytes, lifetime: DefaultLifetime, now: time.Now}
	for _, o := range opts {
		o(&cfg)
	}
	var err error
	if dir == "" {
		if dir, err = privateDir(DefaultBase()); err != nil {
			return nil, fmt.Errorf("blob: spool: %w", err)
		}
	}
	lock, err := claimDir(dir)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("blob: spool: %w", err)
	}
	s := &Spool{cfg: cfg, dir: dir, root: root, lock: lock, entries: map[string]*entry{}, stop: make(chan struct{}), done: make(chan struct{})}
	go s.janitor()
	return s, nil
}

// claimDir makes dir a spool directory: created when missing, refused when
// it is neither empty nor a spool's or when another live spool holds it,
// else emptied. It returns the marker, locked until the spool closes.
func claimDir(dir string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("blob: spool: %w", err)
	}
	names, err := readNames(dir)
	if err != nil {
		return nil, fmt.Errorf("blob: spool: %w", err)
	}
	marker := filepath.Join(dir, markerName)
	if len(names) > 0 {
		if _, err := os.Lstat(marker); err != nil {
			return nil, fmt.Errorf("blob: spool: %s is not empty and not a spool directory (no %s)", dir, markerName)
		}
	}
	lock, err := os.OpenFile(marker, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("blob: spool: %w", err)
	}
	if ok, err := tryLock(lock); err != nil || !ok {
		lock.Close()
		if err == nil {
			err = fmt.Errorf("%s is the spool of another running Computer", dir)
		}
		return nil, fmt.Errorf("blob: spool: %w", err)
	}
	if _, err := lock.WriteAt([]byte(fmt.Sprintf("smcp-go blob spool of process %d; removed when the Computer stops\n", os.Getpid())), 0); err != nil {
		lock.Close()
		return nil, fmt.Errorf("blob: spool: %w", err)
	}
	for _, n := range names {
		if n == markerName {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, n)); err != nil {
			lock.Close()
			return nil, fmt.Errorf("blob: spool: removing what a previous run left: %w", err)
		}
	}
	return lock, nil
}

func readNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// Dir returns the spool's directory.
func (s *Spool) Dir() string { return s.dir }

// InlineBudget returns the largest binary item Mint keeps inline.
func (s *Spool) InlineBudget() int64 { return s.cfg.inline }

// Bytes returns the bytes the spool holds on disk.
func (s *Spool) Bytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

// Close removes every blob and the spool's directory and stops its
// goroutine; later calls answer gone. It is idempotent.
func (s *Spool) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.entries = map[string]*entry{}
	s.total = 0
	s.mu.Unlock()
	close(s.stop)
	<-s.done
	s.root.Close()
	err := os.RemoveAll(s.dir)
	s.lock.Close()
	return err
}

// janitor removes expired blobs while the spool is open, so that disk is
// given back even when nobody calls the spool.
func (s *Spool) janitor() {
	defer close(s.done)
	every := sweepEvery(s.cfg.lifetime)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.mu.Lock()
			if !s.closed {
				s.expireLocked(s.cfg.now())
			}
			s.mu.Unlock()
		}
	}
}

// sweepEvery is how often an owner goroutine looks for what expired: a
// quarter of the lifetime, between 1 and 30 seconds.
func sweepEvery(lifetime time.Duration) time.Duration {
	return min(max(lifetime/4, time.Second), 30*time.Second)
}

func (s *Spool) expireLocked(now time.Time) {
	for h, e := range s.entries {
		if !now.Before(e.expires) {
			s.dropLocked(h, e)
		}
	}
}

func (s *Spool) dropLocked(h string, e *entry) {
	delete(s.entries, h)
	s.total -= e.size
	_ = s.root.Remove(e.file)
}

// ErrSpoolFull is the refusal of a blob larger than the whole spool, or
// than what the blobs being written leave of it.
var ErrSpoolFull = errors.New("blob: larger than the spool's room")

// Put stores data for office and returns its handle and SHA-256 (hex); it
// is PutFrom of data.
func (s *Spool) Put(office string, data []byte, mime string) (handle, sha string, err error) {
	return s.PutFrom(office, bytes.NewReader(data), int64(len(data)), mime)
}

// PutFrom stores the size bytes r yields for office, streaming them to disk
// (memory stays bounded whatever the size), and returns the blob's handle
// and SHA-256 (hex). Expired blobs are dropped first, then the oldest ones
// until the blob fits the spool's bound; a blob larger than the bound, or
// than the room blobs being written leave, is refused, as is r yielding
// fewer or more than size bytes.
func (s *Spool) PutFrom(office string, r io.Reader, size int64, mime string) (handle, sha string, err error) {
	if size < 0 || size > s.cfg.maxBytes {
		return "", "", ErrSpoolFull
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", "", err
	}
	handle = newHandle(raw)

	// Reserve the room under the lock, write without it: the bytes on disk
	// never pass the bound, and a long write holds no reader.
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return "", "", errors.New("blob: spool closed")
	}
	if !s.reserveLocked(size) {
		s.mu.Unlock()
		return "", "", ErrSpoolFull
	}
	s.seq++
	seq := s.seq
	file := fmt.Sprintf("%d.blob", seq)
	s.mu.Unlock()

	sha, werr := s.write(file, r, size)

	s.mu.Lock()
	defer s.mu.Unlock()
	if werr != nil || s.closed {
		if !s.closed {
			s.total -= size
		}
		_ = s.root.Remove(file)
		if werr == nil {
			werr = errors.New("blob: spool closed")
		}
		return "", "", werr
	}
	now := s.cfg.now()
	s.entries[handle] = &entry{office: office, mime: mime, sha: sha, size: size, minted: now, expires: now.Add(s.cfg.lifetime), seq: seq, file: file}
	return handle, sha, nil
}

// reserveLocked makes room for size more bytes on disk: expired blobs go
// first, then the oldest ones (staged blobs apart) until it fits the bound. It reports whether
// the room was taken (s.total then counts it).
func (s *Spool) reserveLocked(size int64) bool {
	s.expireLocked(s.cfg.now())
	if s.total+size > s.cfg.maxBytes {
		old := make([]string, 0, len(s.entries))
		for h, e := range s.entries {
			if !e.staged { // a staged blob's message is on its way to Mint
				old = append(old, h)
			}
		}
		sort.Slice(old, func(i, j int) bool { return s.entries[old[i]].seq < s.entries[old[j]].seq })
		for _, h := range old {
			if s.total+size <= s.cfg.maxBytes {
				break
			}
			s.dropLocked(h, s.entries[h])
		}
	}
	if s.total+size > s.cfg.maxBytes {
		return false
	}
	s.total += size
	return true
}

func newHandle(raw [32]byte) string {
	return handlePrefix + base64.RawURLEncoding.EncodeToString(raw[:])
}

// write copies exactly size bytes of r into a new file of the spool and
// returns their SHA-256.
func (s *Spool) write(file string, r io.Reader, size int64) (string, error) {
	f, err := s.root.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	n, err := io.CopyN(io.MultiWriter(f, h), r, size)
	if err == nil {
		var one [1]byte
		if m, _ := io.ReadFull(r, one[:]); m > 0 {
			err = fmt.Errorf("blob: more than the %d bytes declared", size)
		}
	} else if n < size {
		err = fmt.Errorf("blob: %d bytes of the %d declared: %w", n, size, err)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// blobError is the references' 4018 with its reason.
func blobError(reason string) *protocol.Error {
	return protocol.NewBlobNotAccessible("Blob not accessible").With("reason", reason)
}

// Read answers client:get_blob for a request from office: one chunk of at
// most min(req.MaxChunkBytes, MaxChunkBytes) bytes from req.ChunkOffset.
// An offset equal to the size answers an empty chunk with eof. Refusals are
// *protocol.Error 4018 with details.reason.
func (s *Spool) Read(office string, req protocol.GetBlobReq) (protocol.GetBlobRet, error) {
	h := req.BlobHandle
	if !wellFormed(h) {
		return protocol.GetBlobRet{}, blobError("invalid_handle")
	}
	if req.ChunkOffset < 0 {
		return protocol.GetBlobRet{}, blobError("range")
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return protocol.GetBlobRet{}, blobError("gone")
	}
	e, ok := s.entries[h]
	if ok && e.staged {
		ok = false
	}
	if ok && !s.cfg.now().Before(e.expires) {
		s.dropLocked(h, e)
		ok = false
	}
	if !ok {
		s.mu.Unlock()
		return protocol.GetBlobRet{}, blobError("gone")
	}
	if e.office != office {
		s.mu.Unlock()
		return protocol.GetBlobRet{}, blobError("forbidden")
	}
	// The file is opened under the lock: once open it can be read even if
	// the blob is dropped meanwhile.
	f, err := s.root.Open(e.file)
	ent := *e
	s.mu.Unlock()
	if err != nil {
		return protocol.GetBlobRet{}, blobError("gone")
	}
	defer f.Close()

	off := int64(req.ChunkOffset)
	if off > ent.size {
		return protocol.GetBlobRet{}, blobError("range")
	}
	n := int64(MaxChunkBytes)
	if req.MaxChunkBytes > 0 && int64(req.MaxChunkBytes) < n {
		n = int64(req.MaxChunkBytes)
	}
	n = min(n, ent.size-off)
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
		return protocol.GetBlobRet{}, blobError("gone")
	}
	return protocol.GetBlobRet{
		Blob:        base64.StdEncoding.EncodeToString(buf),
		BlobHandle:  h,
		ChunkOffset: req.ChunkOffset,
		Eof:         off+n == ent.size,
		MimeType:    ent.mime,
		ReqID:       req.ReqID,
		Sha256:      ent.sha,
		TotalSize:   int(ent.size),
	}, nil
}

// wellFormed reports whether h has the form of this package's handles.
func wellFormed(h string) bool {
	rest, ok := strings.CutPrefix(h, handlePrefix)
	if !ok || len(rest) != 43 {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(rest)
	return err == nil
}

// keepPositive sets *dst to v when v is positive: the rule of every
// option here whose zero or negative value keeps the default.
func keepPositive[T int | int64 | time.Duration](dst *T, v T) {
	if v > 0 {
		*dst = v
	}
}
