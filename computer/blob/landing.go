package blob

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
)

// The references' upload bounds (spec/capabilities.md, Blobs).
const (
	// DefaultUploadMaxBytes is the largest upload.
	DefaultUploadMaxBytes = 100 << 20
	// DefaultUploadsBytes bounds the declared bytes of the uploads in
	// flight together.
	DefaultUploadsBytes = 1 << 30
	// DefaultMaxUploads is how many uploads may be in flight at once.
	DefaultMaxUploads = 4
	// DefaultUploadIdle is how long an upload may wait for its next
	// chunk before it is dropped.
	DefaultUploadIdle = 120 * time.Second
)

// PartDir is the directory inside the landing root where uploads in flight
// are written, as the references name it.
const PartDir = ".a2c-upload"

// LandingOption configures a Landing.
type LandingOption func(*landingConfig)

type landingConfig struct {
	maxUpload, maxTotal int64
	maxUploads          int
	idle                time.Duration
	now                 Clock
}

// WithUploadMaxBytes sets the largest upload (default
// DefaultUploadMaxBytes); n ≤ 0 keeps the default.
func WithUploadMaxBytes(n int64) LandingOption {
	return func(c *landingConfig) { keepPositive(&c.maxUpload, n) }
}

// WithUploadsBytes bounds the declared bytes of the uploads in flight
// together (default DefaultUploadsBytes); n ≤ 0 keeps the default.
func WithUploadsBytes(n int64) LandingOption {
	return func(c *landingConfig) { keepPositive(&c.maxTotal, n) }
}

// WithMaxUploads sets how many uploads may be in flight at once (default
// DefaultMaxUploads); n ≤ 0 keeps the default.
func WithMaxUploads(n int) LandingOption {
	return func(c *landingConfig) { keepPositive(&c.maxUploads, n) }
}

// WithUploadIdle sets how long an upload may wait for its next chunk
// (default DefaultUploadIdle); d ≤ 0 keeps the default.
func WithUploadIdle(d time.Duration) LandingOption {
	return func(c *landingConfig) { keepPositive(&c.idle, d) }
}

// WithLandingClock sets the clock idle times are measured with (default
// time.Now).
func WithLandingClock(now Clock) LandingOption {
	return func(c *landingConfig) {
		if now != nil {
			c.now = now
		}
	}
}

// Landing receives client:put_blob uploads into a landing root. A nil
// *Landing refuses every upload with 4019 forbidden, as a reference
// Computer without a landing root does. It is safe for concurrent use.
type Landing struct {
	cfg     landingConfig
	dir     string
	root    *os.Root
	mu      sync.Mutex
	uploads map[string]*upload
	closed  bool
	stop    chan struct{}
	done    chan struct{}
}

type upload struct {
	office, id, part, final string
	declared, received      int64
	sha                     string
	h                       hash.Hash
	f                       *os.File
	last                    time.Time
	busy                    bool
}

// OpenLanding opens the landing root dir, which must exist. Part files a
// previous process left in its PartDir are removed. Close drops the
// uploads in flight and their part files.
func OpenLanding(dir string, opts ...LandingOption) (*Landing, error) {
	cfg := landingConfig{maxUpload: DefaultUploadMaxBytes, maxTotal: DefaultUploadsBytes, maxUploads: DefaultMaxUploads, idle: DefaultUploadIdle, now: time.Now}
	for _, o := range opts {
		o(&cfg)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("blob: landing root: %w", err)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("blob: landing root: %w", err)
	}
	if err := root.RemoveAll(PartDir); err != nil {
		root.Close()
		return nil, fmt.Errorf("blob: landing root: removing what a previous run left: %w", err)
	}
	l := &Landing{cfg: cfg, dir: abs, root: root, uploads: map[string]*upload{}, stop: make(chan struct{}), done: make(chan struct{})}
	go l.janitor()
	return l, nil
}

// Dir returns the landing root's absolute path; "" for a nil Landing.
func (l *Landing) Dir() string {
	if l == nil {
		return ""
	}
	return l.dir
}

// InFlight returns how many uploads are in flight.
func (l *Landing) InFlight() int {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.uploads)
}

// Close drops every upload in flight, removing its part file, and stops
// the Landing's goroutine. It is idempotent.
func (l *Landing) Close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	for _, u := range l.uploads {
		l.dropLocked(u)
	}
	l.mu.Unlock()
	close(l.stop)
	<-l.done
	err := l.root.RemoveAll(PartDir)
	l.root.Close()
	return err
}

func (l *Landing) janitor() {
	defer close(l.done)
	every := sweepEvery(l.cfg.idle)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			l.mu.Lock()
			l.expireLocked(l.cfg.now())
			l.mu.Unlock()
		}
	}
}

// expireLocked drops the uploads idle longer than their lifetime; an
// upload whose chunk is being written is not idle.
func (l *Landing) expireLocked(now time.Time) {
	for _, u := range l.uploads {
		if !u.busy && now.Sub(u.last) > l.cfg.idle {
			l.dropLocked(u)
		}
	}
}

func (l *Landing) dropLocked(u *upload) {
	delete(l.uploads, u.id)
	if u.f != nil {
		u.f.Close()
		u.f = nil
	}
	_ = l.root.Remove(u.part)
}

// writeError is the references' 4019 with its reason.
func writeError(reason, message string) *protocol.Error {
	return protocol.NewBlobWriteFailed("%s", message).With("reason", reason)
}

var (
	unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)
	sha256Hex  = regexp.MustCompile(`^[0-9a-fA-F]{64}$`)
)

// SanitizeName returns the part of a name hint an upload's file name keeps,
// as the references do: runs of characters outside [A-Za-z0-9._-] become
// "_", at most 64 characters are kept, and leading or trailing ".", "_"
// and "-" are trimmed. So the result never holds a separator and is never
// "." or "..".
func SanitizeName(hint string) string {
	s := unsafeName.ReplaceAllString(strings.TrimSpace(hint), "_")
	if r := []rune(s); len(r) > 64 {
		s = string(r[:64])
	}
	return strings.Trim(s, "._-")
}

// Put answers one client:put_blob chunk from office (spec/capabilities.md,
// Blobs). The answer to the last chunk carries landing_path, total_size and
// the sha256 computed. Refusals are *protocol.Error 4019 with
// details.reason; a refused chunk of an upload in flight leaves the upload
// as it was, except an overrun of the declared size and a failed check of
// the whole, which drop it.
func (l *Landing) Put(office string, req protocol.PutBlobReq) (protocol.PutBlobRet, error) {
	if l == nil {
		return protocol.PutBlobRet{}, writeError("forbidden", "landing root not configured")
	}
	if req.UploadID == "" {
		return l.first(office, req)
	}
	return l.next(office, req)
}

func (l *Landing) first(office string, req protocol.PutBlobReq) (protocol.PutBlobRet, error) {
	if req.TotalSize < 1 {
		return protocol.PutBlobRet{}, writeError("invalid_declaration", "total_size must be an int >= 1")
	}
	if !sha256Hex.MatchString(req.Sha256) {
		return protocol.PutBlobRet{}, writeError("invalid_declaration", "sha256 must be a 64-char hex string")
	}
	size := int64(req.TotalSize)
	if size > l.cfg.maxUpload {
		return protocol.PutBlobRet{}, writeError("too_large", "declared total_size exceeds the upload cap").With("total_size", req.TotalSize)
	}
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return protocol.PutBlobRet{}, writeError("io_error", "write to landing root failed")
	}
	id := hex.EncodeToString(raw[:])
	final := id
	if frag := SanitizeName(req.NameHint); frag != "" {
		final = id + "_" + frag
	}

	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return protocol.PutBlobRet{}, writeError("forbidden", "landing root not configured")
	}
	l.expireLocked(l.cfg.now())
	if len(l.uploads) >= l.cfg.maxUploads {
		l.mu.Unlock()
		return protocol.PutBlobRet{}, writeError("busy", "too many concurrent uploads")
	}
	var inFlight int64
	for _, u := range l.uploads {
		inFlight += u.declared
	}
	if inFlight+size > l.cfg.maxTotal {
		l.mu.Unlock()
		return protocol.PutBlobRet{}, writeError("busy", "too many bytes in concurrent uploads")
	}
	if err := l.root.Mkdir(PartDir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		l.mu.Unlock()
		return protocol.PutBlobRet{}, writeError("forbidden", "landing root not writable")
	}
	part := PartDir + "/" + id + ".part"
	f, err := l.root.OpenFile(part, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		l.mu.Unlock()
		return protocol.PutBlobRet{}, writeError("forbidden", "landing root not writable")
	}
	u := &upload{office: office, id: id, part: part, final: final, declared: size, sha: strings.ToLower(req.Sha256), h: sha256.New(), f: f, last: l.cfg.now(), busy: true}
	l.uploads[id] = u
	l.mu.Unlock()
	return l.append(u, req)
}

func (l *Landing) next(office string, req protocol.PutBlobReq) (protocol.PutBlobRet, error) {
	l.mu.Lock()
	if !l.closed {
		l.expireLocked(l.cfg.now())
	}
	u, ok := l.uploads[req.UploadID]
	// An upload of another office is as unknown as one that never was.
	if !ok || u.office != office {
		l.mu.Unlock()
		return protocol.PutBlobRet{}, writeError("invalid_upload", "unknown or expired upload session").With("upload_id", req.UploadID)
	}
	if u.busy {
		l.mu.Unlock()
		return protocol.PutBlobRet{}, writeError("range", "chunk_offset does not match received bytes").With("upload_id", u.id)
	}
	if req.TotalSize != 0 || req.Sha256 != "" || req.NameHint != "" {
		l.mu.Unlock()
		return protocol.PutBlobRet{}, writeError("invalid_declaration", "declaration fields must only appear on the first chunk")
	}
	u.busy = true
	l.mu.Unlock()
	return l.append(u, req)
}

// append writes one chunk of u, which the caller marked busy so that no
// other chunk and no expiry touches it meanwhile.
func (l *Landing) append(u *upload, req protocol.PutBlobReq) (ret protocol.PutBlobRet, err error) {
	keep := true
	defer func() {
		l.mu.Lock()
		u.busy = false
		u.last = l.cfg.now()
		if !keep {
			l.dropLocked(u)
		}
		l.mu.Unlock()
	}()
	if int64(req.ChunkOffset) != u.received {
		return ret, writeError("range", "chunk_offset does not match received bytes").With("upload_id", u.id)
	}
	// A chunk whose base64 text already says it overruns the declaration
	// is not decoded.
	if u.received+int64(base64.StdEncoding.DecodedLen(len(req.Blob)))-2 > u.declared {
		keep = false
		return ret, writeError("range", "received bytes exceed the declared total_size").With("upload_id", u.id)
	}
	chunk, derr := base64.StdEncoding.DecodeString(req.Blob)
	if derr != nil {
		return ret, writeError("invalid_declaration", "blob is not valid base64").With("upload_id", u.id)
	}
	end := u.received + int64(len(chunk))
	if end > u.declared {
		keep = false
		return ret, writeError("range", "received bytes exceed the declared total_size").With("upload_id", u.id)
	}
	if req.Eof && end != u.declared {
		return ret, writeError("range", "final chunk does not complete the declared total_size").With("upload_id", u.id)
	}
	if _, werr := u.f.Write(chunk); werr != nil {
		keep = false
		return ret, writeError("io_error", "write to landing root failed").With("upload_id", u.id)
	}
	u.h.Write(chunk)
	u.received = end
	if !req.Eof {
		return protocol.PutBlobRet{UploadID: u.id, ChunkOffset: req.ChunkOffset, ReqID: req.ReqID}, nil
	}
	keep = false // finished or failed, the upload ends here
	if serr := u.f.Sync(); serr != nil {
		return ret, writeError("io_error", "flushing the upload failed").With("upload_id", u.id)
	}
	sum := hex.EncodeToString(u.h.Sum(nil))
	if sum != u.sha {
		return ret, writeError("integrity", "sha256 mismatch; upload discarded").With("upload_id", u.id)
	}
	if _, lerr := l.root.Lstat(u.final); lerr == nil {
		return ret, writeError("io_error", "finalizing the upload failed").With("upload_id", u.id)
	}
	if rerr := l.root.Rename(u.part, u.final); rerr != nil {
		return ret, writeError("io_error", "finalizing the upload failed").With("upload_id", u.id)
	}
	total := int(u.received)
	return protocol.PutBlobRet{
		UploadID:    u.id,
		ChunkOffset: req.ChunkOffset,
		LandingPath: filepath.Join(l.dir, u.final),
		TotalSize:   &total,
		Sha256:      sum,
		ReqID:       req.ReqID,
	}, nil
}
