package skills

import (
	"context"
	"encoding/base64"
	"io"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/a2c-smcp/smcp-go/protocol"
)

// MCPServer is a connected MCP server whose skill:// resources are skills
// (*mcpclient.Conn with its bundle_id is one).
type MCPServer interface {
	BundleID() string
	ListResources(ctx context.Context) ([]mcp.Resource, error)
	ReadResource(ctx context.Context, uri string) ([]mcp.ResourceContents, error)
}

// skillScheme starts the URI of an MCP server's skill resources.
const skillScheme = "skill://"

// uriPath is the path of a skill:// URI after its host, without "/".
func uriPath(uri string) string {
	_, p, _ := strings.Cut(strings.TrimPrefix(uri, skillScheme), "/")
	return p
}

// under reports whether uri is strictly below root.
func under(uri, root string) bool {
	rest, ok := strings.CutPrefix(uri, root)
	return ok && strings.HasPrefix(rest, "/")
}

// mcpSkills lists the skills of an MCP server as the references find them
// (spec/capabilities.md, Skills): a skill:// resource whose _meta.source
// is "resources", "mounted" or "archive", and that is not below another
// such root, is a skill's root. A "resources" skill's files are the
// resources below its root, read through the server; a "mounted" one's are
// the local folder of its _meta.mount_dir; an "archive" one's are those of
// the archive at _meta.archive_uri (http or https; _meta.archive_format
// "zip" or "tar.gz"; checked against _meta.archive_sha256 when given),
// expanded within the ArchiveLimits into the cache directory (see
// stageArchive). The skill's name is mcp:<bundle_id>:<front matter name>,
// its source mcp:<bundle_id>, its uri the root.
func (s *Set) mcpSkills(ctx context.Context, srv MCPServer) []found {
	bid := srv.BundleID()
	list, err := srv.ListResources(ctx)
	if err != nil {
		slog.Debug("skills: MCP server's resources not listed", "bundle_id", bid, "err", err)
		return nil
	}
	type root struct {
		uri  string
		meta map[string]any
	}
	var cands []root
	for _, r := range list {
		if !strings.HasPrefix(r.URI, skillScheme) || r.Meta == nil {
			continue
		}
		if mode, _ := r.Meta.AdditionalFields["source"].(string); slices.Contains([]string{"resources", "mounted", "archive"}, mode) {
			cands = append(cands, root{r.URI, r.Meta.AdditionalFields})
		}
	}
	var out []found
	for _, c := range cands {
		leaf, _, _ := strings.Cut(uriPath(c.uri), "/")
		if leaf == "" || slices.ContainsFunc(cands, func(o root) bool { return o.uri != c.uri && under(c.uri, o.uri) }) {
			continue
		}
		var f found
		var head []byte
		switch c.meta["source"] {
		case "resources":
			f.files = map[string]string{}
			for _, r := range list {
				if under(r.URI, c.uri) {
					f.files[strings.TrimPrefix(r.URI, c.uri+"/")] = r.URI
				}
			}
			uri, ok := f.files[SkillFile]
			if !ok {
				continue
			}
			head, err = readMCP(ctx, srv, uri, maxFrontMatter+8)
			if err != nil {
				continue
			}
			f.srv = srv
			f.ref.Path = c.uri
		case "mounted":
			dir, _ := c.meta["mount_dir"].(string)
			if dir == "" {
				continue
			}
			r, err := os.OpenRoot(dir)
			if err != nil {
				continue
			}
			head, err = r.ReadFile(SkillFile)
			r.Close()
			if err != nil {
				continue
			}
			f.dir, f.ref.Path = dir, dir
		default: // archive
			dir, err := s.stageArchive(ctx, bid, c.uri, c.meta)
			if err != nil {
				slog.Warn("skills: an MCP server's archive skill is not offered", "bundle_id", bid, "uri", c.uri, "err", err)
				continue
			}
			if head, err = readIn(dir, SkillFile, maxFrontMatter+8); err != nil {
				continue
			}
			f.dir, f.ref.Path = dir, dir
		}
		ref, fm, ok := refOf(head)
		name, _ := fm["name"].(string)
		full := "mcp:" + bid + ":" + name
		if !ok || !ValidName(full) {
			continue
		}
		ref.Path, ref.Name, ref.Source, ref.URI = f.ref.Path, full, "mcp:"+bid, c.uri
		if v, ok := c.meta["version"].(string); ok {
			ref.Version = v
		}
		f.ref = ref
		out = append(out, f)
	}
	return out
}

// readMCP reads one resource through the server: its text, or its blob
// decoded; at most limit bytes (more is an error).
func readMCP(ctx context.Context, srv MCPServer, uri string, limit int64) ([]byte, error) {
	contents, err := srv.ReadResource(ctx, uri)
	if err != nil {
		return nil, err
	}
	if len(contents) == 0 {
		return nil, os.ErrNotExist
	}
	var data []byte
	switch c := contents[0].(type) {
	case mcp.TextResourceContents:
		data = []byte(c.Text)
	case *mcp.TextResourceContents:
		data = []byte(c.Text)
	case mcp.BlobResourceContents:
		data, err = base64.StdEncoding.DecodeString(c.Blob)
	case *mcp.BlobResourceContents:
		data, err = base64.StdEncoding.DecodeString(c.Blob)
	default:
		return nil, os.ErrNotExist
	}
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, io.ErrShortBuffer
	}
	return data, nil
}

// getMCP answers get_skill for a skill of an MCP server's resources: only
// a file listed below the skill's root is read.
func (s *Set) getMCP(ctx context.Context, office string, req protocol.GetSkillReq, sk *found, rel, clean string) (protocol.GetSkillRet, error) {
	uri, ok := sk.files[clean]
	if !ok {
		return protocol.GetSkillRet{}, resourceError("not_found", rel)
	}
	data, err := readMCP(ctx, sk.srv, uri, s.maxFile)
	if err == io.ErrShortBuffer {
		return protocol.GetSkillRet{}, resourceError("too_large", rel)
	}
	if err != nil {
		return protocol.GetSkillRet{}, resourceError("not_found", rel)
	}
	return s.answer(office, req, rel, mimeOf(clean), path.Base(clean) == SkillFile, data)
}

// archived is an archive skill as expanded by the last refresh.
type archived struct{ uri, format, sum, dir string }

// stageArchive expands the archive of an MCP server's skill root into
// <cache>/mcp/<bundle_id>/<front matter name>/ and returns that folder.
// The archive is fetched again at each refresh unless its declared
// archive_sha256 is that of the one expanded; the same bytes are not
// expanded again (the folder, and so the skills' digest, stay as they
// are). The archive is expanded into a new folder first, renamed when
// complete: a refused archive leaves nothing behind.
func (s *Set) stageArchive(ctx context.Context, bid, root string, meta map[string]any) (string, error) {
	if s.cache == "" {
		return "", archiveErr("no cache directory (WithCacheDir)")
	}
	uri, _ := meta["archive_uri"].(string)
	format, _ := meta["archive_format"].(string)
	want, _ := meta["archive_sha256"].(string)
	want = strings.ToLower(strings.TrimSpace(want))
	if uri == "" {
		return "", archiveErr("archive skill without archive_uri")
	}
	if format != "zip" && format != "tar.gz" {
		return "", archiveErr("unsupported archive_format %q (expect \"tar.gz\" or \"zip\")", format)
	}
	key := bid + "\x00" + root
	prev, had := s.archives[key]
	had = had && prev.uri == uri && prev.format == format && isDir(prev.dir)
	if had && want != "" && prev.sum == want {
		return prev.dir, nil
	}
	data, err := fetchArchive(ctx, s.http, uri, s.archLim.Download)
	if err != nil {
		return "", err
	}
	sum := sha256Hex(data)
	if want != "" && sum != want {
		return "", archiveErr("archive sha256 %s is not the declared %s", sum, want)
	}
	if had && prev.sum == sum {
		return prev.dir, nil
	}
	base := filepath.Join(s.cache, "mcp", bid)
	if err := os.MkdirAll(base, 0o700); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(base, ".stage-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if err := extractArchive(data, format, tmp, s.archLim); err != nil {
		return "", err
	}
	head, err := readIn(tmp, SkillFile, maxFrontMatter+8)
	if err != nil {
		return "", archiveErr("archive has no %s at its root", SkillFile)
	}
	name, _ := frontMatter(head)["name"].(string)
	if !validSegment(name) {
		return "", archiveErr("front matter name %q is not strict kebab case", name)
	}
	final := filepath.Join(base, name)
	for k, a := range s.archives {
		if k != key && a.dir == final {
			return "", archiveErr("another skill root of the server is named %q", name)
		}
	}
	if err := os.RemoveAll(final); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, final); err != nil {
		return "", err
	}
	s.archives[key] = archived{uri: uri, format: format, sum: sum, dir: final}
	return final, nil
}

// pruneArchives removes the expanded archives no skill of list uses.
func (s *Set) pruneArchives(list []found) {
	used := map[string]bool{}
	for _, f := range list {
		used[f.dir] = true
	}
	for k, a := range s.archives {
		if !used[a.dir] {
			_ = os.RemoveAll(a.dir)
			delete(s.archives, k)
		}
	}
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// readIn reads a file inside dir through an os.Root, at most limit bytes.
func readIn(dir, rel string, limit int64) ([]byte, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	f, err := r.Open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, limit))
}
