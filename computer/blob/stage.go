package blob

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"os"
	"strconv"
	"strings"
	"time"
)

// stagedPrefix starts the value Staged.Commit returns, which stands in for
// the inline bytes of a binary item already written to the spool; Mint
// turns it into the item's sideband, Inline back into its bytes.
const stagedPrefix = "a2c-staged:"

// ErrAboveMintCap is the refusal of a staged blob larger than the mint
// cap (WithMintCap).
var ErrAboveMintCap = errors.New("blob: larger than the mint cap")

var errClosed = errors.New("blob: spool closed")

// stagedLifetime bounds how long a staged blob waits for Mint: its message
// reaches Mint at once, unless its request was abandoned meanwhile (the
// answer came after the call's timeout), and eviction spares staged blobs.
const stagedLifetime = time.Minute

// MintCap returns the largest binary item the spool takes (WithMintCap).
func (s *Spool) MintCap() int64 { return s.cfg.mintCap }

// MaxBytes returns the bound of the spool's bytes on disk (WithMaxBytes).
func (s *Spool) MaxBytes() int64 { return s.cfg.maxBytes }

// Staged is a blob being written to the spool before the office it is for
// is known: the decoded bytes of one binary item of a tool result, written
// as they arrive from the MCP server (package mcpclient), so that the item
// is never held in memory whole. Each Write takes its room in the spool
// (evicting the oldest blobs as PutFrom does); a blob over the mint cap or
// the spool's room is refused (ErrAboveMintCap, ErrSpoolFull). Commit ends
// it, Abort removes it. A Staged is used by one goroutine.
type Staged struct {
	s    *Spool
	f    *os.File
	file string
	seq  uint64
	h    hash.Hash
	n    int64 // bytes written, and reserved in s.total
	done bool
}

// Stage starts a staged blob.
func (s *Spool) Stage() (*Staged, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errClosed
	}
	s.seq++
	seq := s.seq
	s.mu.Unlock()
	file := fmt.Sprintf("%d.blob", seq)
	f, err := s.root.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("blob: spool: %w", err)
	}
	return &Staged{s: s, f: f, file: file, seq: seq, h: sha256.New()}, nil
}

// Write appends decoded bytes of the blob.
func (w *Staged) Write(p []byte) (int, error) {
	if w.done {
		return 0, errors.New("blob: staged blob already ended")
	}
	n := int64(len(p))
	if w.n+n > w.s.cfg.mintCap {
		return 0, ErrAboveMintCap
	}
	w.s.mu.Lock()
	if w.s.closed {
		w.s.mu.Unlock()
		return 0, errClosed
	}
	ok := w.s.reserveLocked(n)
	w.s.mu.Unlock()
	if !ok {
		return 0, ErrSpoolFull
	}
	w.n += n
	m, err := w.f.Write(p)
	w.h.Write(p[:m])
	return m, err
}

// Size returns the bytes written so far.
func (w *Staged) Size() int64 { return w.n }

// Commit ends the blob and keeps it in the spool, unclaimed, for at most a
// minute (eviction spares it meanwhile). It returns the value that stands in for the item's
// inline bytes: Mint claims the blob for the office the tool result goes
// to, Discard removes it.
func (w *Staged) Commit() (string, error) {
	if w.done {
		return "", errors.New("blob: staged blob already ended")
	}
	if err := w.f.Close(); err != nil {
		w.abort(false)
		return "", fmt.Errorf("blob: spool: %w", err)
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		w.abort(false)
		return "", err
	}
	w.done = true
	handle := newHandle(raw)
	sha := hex.EncodeToString(w.h.Sum(nil))
	s := w.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		_ = s.root.Remove(w.file)
		return "", errClosed
	}
	now := s.cfg.now()
	s.entries[handle] = &entry{sha: sha, size: w.n, minted: now, expires: now.Add(min(s.cfg.lifetime, stagedLifetime)), seq: w.seq, file: w.file, staged: true}
	return stagedPrefix + handle + ":" + strconv.FormatInt(w.n, 10) + ":" + sha, nil
}

// Abort removes the blob and gives back its room; it is a no-op after
// Commit or Abort.
func (w *Staged) Abort() {
	if !w.done {
		w.abort(true)
	}
}

func (w *Staged) abort(closeFile bool) {
	w.done = true
	if closeFile {
		_ = w.f.Close()
	}
	s := w.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.total -= w.n
		_ = s.root.Remove(w.file)
	}
}

// parseStaged reads a value Commit returned.
func parseStaged(v string) (handle string, size int64, sha string, ok bool) {
	rest, ok := strings.CutPrefix(v, stagedPrefix)
	if !ok {
		return "", 0, "", false
	}
	parts := strings.Split(rest, ":")
	if len(parts) != 3 || !wellFormed(parts[0]) || len(parts[2]) != 64 {
		return "", 0, "", false
	}
	size, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil || size < 0 {
		return "", 0, "", false
	}
	return parts[0], size, parts[2], true
}

// claim makes the staged blob handle office's, with its MIME type, served
// for the spool's lifetime from now; false when the spool no longer has it
// staged (evicted, expired, claimed already).
func (s *Spool) claim(office, handle, mime string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[handle]
	if !ok || !e.staged || s.closed {
		return false
	}
	now := s.cfg.now()
	e.staged, e.office, e.mime, e.minted, e.expires = false, office, mime, now, now.Add(s.cfg.lifetime)
	return true
}

// Discard removes a staged blob that will not be claimed (its message was
// refused or dropped); ref is what Commit returned.
func (s *Spool) Discard(ref string) {
	handle, _, _, ok := parseStaged(ref)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.entries[handle]; ok && e.staged {
		s.dropLocked(handle, e)
	}
}
