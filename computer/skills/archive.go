package skills

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"strings"
)

// ArchiveLimits bound what an MCP server's archive skill may hold
// (spec/capabilities.md, Skills): a download, its entries and the bytes
// they expand to, counted as they are written (a size an entry's header
// claims is not trusted), so that a zip bomb is refused before it fills
// the disk. The defaults are the references'.
type ArchiveLimits struct {
	// Download is the largest archive fetched (default 64 MiB).
	Download int64
	// Extracted is the most bytes all its files expand to (default 256 MiB).
	Extracted int64
	// Entries is the most entries it may have (default 10000).
	Entries int
	// File is the largest single file (default the WithMaxFileBytes bound).
	File int64
}

// Default archive bounds, as the references'.
const (
	DefaultArchiveDownload  = 64 << 20
	DefaultArchiveExtracted = 256 << 20
	DefaultArchiveEntries   = 10000
)

func (l ArchiveLimits) withDefaults(maxFile int64) ArchiveLimits {
	if l.Download <= 0 {
		l.Download = DefaultArchiveDownload
	}
	if l.Extracted <= 0 {
		l.Extracted = DefaultArchiveExtracted
	}
	if l.Entries <= 0 {
		l.Entries = DefaultArchiveEntries
	}
	if l.File <= 0 {
		l.File = maxFile
	}
	return l
}

// errArchive is the class of the refusals of an archive skill.
var errArchive = errors.New("skills: archive refused")

func archiveErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", errArchive, fmt.Sprintf(format, a...))
}

// fetchArchive downloads an archive skill's _meta.archive_uri (http or
// https, as the references fetch it), at most lim bytes.
func fetchArchive(ctx context.Context, client *http.Client, uri string, lim int64) ([]byte, error) {
	u, err := url.Parse(uri)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, archiveErr("archive_uri %q is not an http(s) URL", redactURL(uri))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, uri, nil)
	if err != nil {
		return nil, archiveErr("archive_uri %q: %v", redactURL(uri), err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, archiveErr("fetch %s: %v", redactURL(uri), redactErr(err, uri))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, archiveErr("fetch %s: HTTP %d", redactURL(uri), resp.StatusCode)
	}
	if resp.ContentLength > lim {
		return nil, archiveErr("archive of %d bytes exceeds the download limit (%d bytes)", resp.ContentLength, lim)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, lim+1))
	if err != nil {
		return nil, archiveErr("fetch %s: %v", redactURL(uri), redactErr(err, uri))
	}
	if int64(len(data)) > lim {
		return nil, archiveErr("archive exceeds the download limit (%d bytes)", lim)
	}
	return data, nil
}

// entryName checks an archive entry's name: a relative POSIX path inside
// the skill, no "..", no absolute path, no backslash or NUL. It returns
// the cleaned path ("" for the root itself).
func entryName(name string) (string, error) {
	if strings.ContainsAny(name, "\\\x00") || strings.HasPrefix(name, "/") || (len(name) > 1 && name[1] == ':') {
		return "", archiveErr("entry %q escapes the skill", name)
	}
	var segs []string
	for _, seg := range strings.Split(name, "/") {
		switch seg {
		case "", ".":
			continue
		case "..":
			return "", archiveErr("entry %q escapes the skill", name)
		}
		segs = append(segs, seg)
	}
	return strings.Join(segs, "/"), nil
}

// extractor writes an archive's entries under one directory, through an
// os.Root (no entry leads outside it, whatever the names), within lim.
type extractor struct {
	root    *os.Root
	lim     ArchiveLimits
	entries int
	total   int64
}

func (x *extractor) entry() error {
	if x.entries++; x.entries > x.lim.Entries {
		return archiveErr("archive has more than %d entries", x.lim.Entries)
	}
	return nil
}

func (x *extractor) mkdirAll(rel string) error {
	cur := ""
	for _, seg := range strings.Split(rel, "/") {
		cur = path.Join(cur, seg)
		if err := x.root.Mkdir(cur, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return archiveErr("entry %q: %v", rel, err)
		}
		if fi, err := x.root.Lstat(cur); err != nil || !fi.IsDir() {
			return archiveErr("entry %q: %s is not a directory", rel, cur)
		}
	}
	return nil
}

// file writes one regular file, counting the bytes as they come.
func (x *extractor) file(rel string, declared int64, src io.Reader) error {
	if declared > x.lim.File {
		return archiveErr("entry %q of %d bytes exceeds the file limit (%d bytes)", rel, declared, x.lim.File)
	}
	if dir := path.Dir(rel); dir != "." {
		if err := x.mkdirAll(dir); err != nil {
			return err
		}
	}
	f, err := x.root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return archiveErr("entry %q: %v", rel, err)
	}
	defer f.Close()
	budget := min(x.lim.File, x.lim.Extracted-x.total)
	n, err := io.Copy(f, io.LimitReader(src, budget+1))
	x.total += n
	if err != nil {
		return archiveErr("entry %q: %v", rel, err)
	}
	if n > budget {
		if x.total > x.lim.Extracted {
			return archiveErr("archive expands beyond the limit (%d bytes)", x.lim.Extracted)
		}
		return archiveErr("entry %q exceeds the file limit (%d bytes)", rel, x.lim.File)
	}
	return nil
}

// extractArchive expands an archive skill (format "zip" or "tar.gz", its
// _meta.archive_format) into dir, which must be empty. A link entry
// (symlink or hard link) is refused, as are devices and other special
// files; so is an entry named outside the skill.
func extractArchive(data []byte, format, dir string, lim ArchiveLimits) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	x := &extractor{root: root, lim: lim}
	switch format {
	case "zip":
		return x.zip(data)
	case "tar.gz":
		return x.tarGz(data)
	}
	return archiveErr("unsupported archive_format %q (expect \"tar.gz\" or \"zip\")", format)
}

func (x *extractor) zip(data []byte) error {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return archiveErr("zip: %v", err)
	}
	if len(zr.File) > x.lim.Entries {
		return archiveErr("archive has more than %d entries", x.lim.Entries)
	}
	for _, zf := range zr.File {
		if err := x.entry(); err != nil {
			return err
		}
		rel, err := entryName(zf.Name)
		if err != nil {
			return err
		}
		mode := zf.Mode()
		switch {
		case mode&fs.ModeSymlink != 0:
			return archiveErr("entry %q is a link", zf.Name)
		case mode.IsDir() || strings.HasSuffix(zf.Name, "/"):
			if rel != "" {
				if err := x.mkdirAll(rel); err != nil {
					return err
				}
			}
		case mode.IsRegular():
			if rel == "" {
				return archiveErr("entry %q has no name", zf.Name)
			}
			if zf.UncompressedSize64 > uint64(x.lim.File) {
				return archiveErr("entry %q of %d bytes exceeds the file limit (%d bytes)", rel, zf.UncompressedSize64, x.lim.File)
			}
			rc, err := zf.Open()
			if err != nil {
				return archiveErr("entry %q: %v", rel, err)
			}
			err = x.file(rel, 0, rc)
			rc.Close()
			if err != nil {
				return err
			}
		default:
			return archiveErr("entry %q is not a regular file or directory", zf.Name)
		}
	}
	return nil
}

func (x *extractor) tarGz(data []byte) error {
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return archiveErr("gzip: %v", err)
	}
	defer gz.Close()
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return archiveErr("tar: %v", err)
		}
		if err := x.entry(); err != nil {
			return err
		}
		rel, err := entryName(h.Name)
		if err != nil {
			return err
		}
		switch h.Typeflag {
		case tar.TypeSymlink, tar.TypeLink:
			return archiveErr("entry %q is a link", h.Name)
		case tar.TypeDir:
			if rel != "" {
				if err := x.mkdirAll(rel); err != nil {
					return err
				}
			}
		case tar.TypeReg:
			if rel == "" {
				return archiveErr("entry %q has no name", h.Name)
			}
			if err := x.file(rel, h.Size, tr); err != nil {
				return err
			}
		case tar.TypeXGlobalHeader, tar.TypeXHeader, tar.TypeGNULongName, tar.TypeGNULongLink:
			// metadata, read by archive/tar itself
		default:
			return archiveErr("entry %q is not a regular file or directory", h.Name)
		}
	}
}

// sha256Hex is the hex SHA-256 of data.
func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
