package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// The 0.4 capabilities on the command line
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/capabilities.md):
// a Computer's MCP server's resources, its skills, and blobs both ways.

// cmdResources lists the resources of one MCP server of a Computer, by its
// bundle_id, following the cursors (client:get_resources).
func cmdResources(ctx context.Context, e *env, args []string) error {
	all := []protocol.A2CResource{}
	for r, err := range e.client.Resources(ctx, args[0], args[1]) {
		if err != nil {
			return err
		}
		all = append(all, r)
	}
	if e.g.json {
		return e.printJSON(all)
	}
	tw := e.table("URI", "NAME", "MIME", "SIZE", "DESCRIPTION")
	for _, r := range all {
		size := "-"
		if r.Size != nil {
			size = strconv.Itoa(*r.Size)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.URI, cell(r.Name, 40), cell(r.MimeType, 0), size, cell(r.Description, 60))
	}
	return tw.Flush()
}

// cmdSkills lists a Computer's skills (client:get_skills).
func cmdSkills(ctx context.Context, e *env, args []string) error {
	skills, err := e.client.Skills(ctx, args[0])
	if err != nil {
		return err
	}
	if e.g.json {
		return e.printJSON(skills)
	}
	tw := e.table("SKILL", "DESCRIPTION", "PATH")
	for _, s := range skills {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Name, cell(s.Description, 60), cell(s.Path, 0))
	}
	return tw.Flush()
}

// cmdSkill writes one file of a skill (client:get_skill), SKILL.md unless a
// relative path is given, to stdout or --output; a file the Computer
// answers as a blob handle is streamed with client:get_blob and checked.
// --json prints the answer itself.
func cmdSkill(ctx context.Context, e *env, args []string) error {
	rel := ""
	if len(args) == 3 {
		rel = args[2]
	}
	ret, err := e.client.Skill(ctx, args[0], args[1], rel)
	if err != nil {
		return err
	}
	if e.g.json {
		return e.printJSON(ret)
	}
	if ret.BlobHandle == nil {
		body := []byte(str(ret.Body))
		if e.o.output == "" {
			_, err := e.out.Write(body)
			return err
		}
		return writeFile(e.o.output, func(w io.Writer) error { _, err := w.Write(body); return err })
	}
	if e.o.output == "" {
		_, _, err := copyBlob(ctx, e, args[0], *ret.BlobHandle, e.out)
		return err
	}
	return writeFile(e.o.output, func(w io.Writer) error {
		_, _, err := copyBlob(ctx, e, args[0], *ret.BlobHandle, w)
		return err
	})
}

// cmdBlob is blob get COMPUTER HANDLE -o FILE and blob put COMPUTER FILE.
func cmdBlob(ctx context.Context, e *env, args []string) error {
	switch args[0] {
	case "get":
		if e.o.output == "" {
			return usagef("blob get: give the file to write with -o FILE")
		}
		return blobGet(ctx, e, args[1], args[2])
	case "put":
		return blobPut(ctx, e, args[1], args[2])
	}
	return usagef("usage: smcp-agent blob get COMPUTER HANDLE -o FILE, or blob put COMPUTER FILE [--as NAME]")
}

// blobGet downloads a blob (a tool result's a2c_blob_handle, a skill
// file's blob_handle) chunk by chunk into a file; the file appears only
// when its size and sha256 are the ones the Computer announced.
func blobGet(ctx context.Context, e *env, computer, handle string) error {
	var (
		size int64
		sum  string
		mime string
	)
	err := writeFile(e.o.output, func(w io.Writer) error {
		h := sha256.New()
		n, m, err := copyBlob(ctx, e, computer, handle, io.MultiWriter(w, h))
		size, mime, sum = n, m, hex.EncodeToString(h.Sum(nil))
		return err
	})
	if err != nil {
		return err
	}
	if e.g.json {
		return e.printJSON(map[string]any{"path": e.o.output, "total_size": size, "sha256": sum, "mime_type": mime})
	}
	fmt.Fprintf(e.out, "%s: %d bytes, %s, sha256 %s\n", e.o.output, size, cell(mime, 0), sum)
	return nil
}

// copyBlob streams a blob to w with the progress bar; agent.BlobReader
// checks the size and sha256 at its end (4018 on a mismatch).
func copyBlob(ctx context.Context, e *env, computer, handle string, w io.Writer) (int64, string, error) {
	r := e.client.OpenBlob(ctx, computer, handle)
	report, done := withBytesBar(e.errOut)
	defer done()
	buf := make([]byte, agent.MaxBlobChunk)
	var n int64
	for {
		k, err := r.Read(buf)
		if k > 0 {
			if _, werr := w.Write(buf[:k]); werr != nil {
				return n, r.MimeType(), protocol.NewInternal("writing blob %s: %v", handle, werr).Wrap(werr)
			}
			n += int64(k)
			report(n, int64(r.Size()))
		}
		if errors.Is(err, io.EOF) {
			return n, r.MimeType(), nil
		}
		if err != nil {
			return n, r.MimeType(), err
		}
	}
}

// blobPut uploads a file to the Computer's landing root (client:put_blob)
// and prints where it landed. The name hint is --as, else the file's
// base name.
func blobPut(ctx context.Context, e *env, computer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return protocol.NewBadRequest("blob put: %v", err).Wrap(err)
	}
	defer f.Close()
	name := e.o.name
	if name == "" {
		name = filepath.Base(path)
	}
	report, done := withBytesBar(e.errOut)
	ret, err := e.client.PutBlob(ctx, computer, f, name, report)
	done()
	if err != nil {
		return err
	}
	if e.g.json {
		return e.printJSON(ret)
	}
	fmt.Fprintln(e.out, ret.LandingPath)
	return nil
}

// writeFile writes path through fill: into a temporary file beside it,
// renamed to path only when fill succeeds (a failed or interrupted
// download leaves nothing behind).
func writeFile(path string, fill func(io.Writer) error) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".*.part")
	if err != nil {
		return protocol.NewBadRequest("output %s: %v", path, err).Wrap(err)
	}
	defer os.Remove(tmp.Name()) // after the rename: nothing
	if err := fill(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return protocol.NewInternal("output %s: %v", path, err).Wrap(err)
	}
	if err := tmp.Close(); err != nil {
		return protocol.NewInternal("output %s: %v", path, err).Wrap(err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return protocol.NewInternal("output %s: %v", path, err).Wrap(err)
	}
	return nil
}
