package skills

import (
	"context"
	"encoding/base64"
	"io"
	"log/slog"
	"os"
	"path"
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
// is "resources" or "mounted", and that is not below another such root,
// is a skill's root. A "resources" skill's files are the resources below
// its root, read through the server; a "mounted" one's are the local
// folder of its _meta.mount_dir. "archive" skills (a download) are not
// served. The skill's name is mcp:<bundle_id>:<front matter name>, its
// source mcp:<bundle_id>, its uri the root.
func mcpSkills(ctx context.Context, srv MCPServer) []found {
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
		default:
			slog.Info("skills: an MCP server's archive skill is not served", "bundle_id", bid, "uri", c.uri)
			continue
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
