// Package skills offers a Computer's skills over protocol 0.4
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/capabilities.md#skills):
// client:get_skills lists them, client:get_skill returns one file of one.
//
// # Sources
//
// As the reference Computers lay them out: a skill home's user folder,
// <home>/user/<skill>/SKILL.md, gives the skill "<skill>" (source "user");
// a plugin directory, <plugin dir>/skills/<skill>/SKILL.md, gives
// "<plugin>:<skill>" (source "marketplace"). A skill and a plugin name are
// strict kebab case (a-z, 0-9 and single inner hyphens, at most 64
// characters); a folder with another name, or whose SKILL.md has no
// front-matter description, is skipped. The first skill of a name wins.
// The front matter (YAML between two "---" lines) gives description,
// license, compatibility, allowed-tools, tags and metadata
// (skill_metadata). An MCP server's skill:// resources give
// "mcp:<bundle_id>:<name>" (source "mcp:<bundle_id>", see mcp.go and
// RefreshMCP): served through the server ("resources"), from a local
// folder ("mounted") or from an archive expanded into the cache directory
// ("archive", within ArchiveLimits). A git marketplace (Marketplace,
// declared as a reference settings.json does: Settings) gives
// "<plugin>:<skill>" for its plugins' skills (source
// "marketplace:<name>"), cloned with the system git into the cache
// directory at RefreshMarketplaces, each git command and download within
// WithFetchTimeout, each clone within WithMaxCloneBytes; nothing of a
// clone is served from outside it, its links notwithstanding.
//
// # Files
//
// Get returns SKILL.md (its body, front matter stripped, as text/markdown)
// or another file named by a relative POSIX path inside the skill's
// folder, opened through os.Root so that neither ".." nor a symlink leads
// outside it. Text up to the inline budget (32 KiB) is the answer's body;
// anything larger or binary is put in the blob spool and the answer
// carries its blob_handle. Refusals: 4016 "Invalid skill name" (details
// name), 4014 "Skill not found" (details name), 4017 "Skill resource not
// accessible" with details reason traversal, forbidden (".skillenv", the
// references' secret file), not_found or too_large (above
// WithMaxFileBytes, 100 MiB), rel_path and, for too_large, total_size.
//
// # Changes
//
// Rescan compares a digest of every skill's folder (names, sizes and
// modification times of its files) with the previous one and calls the
// WithOnChange callback when it differs; Watch rescans periodically. The
// Computer sends server:update_skills from that callback.
package skills

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"mime"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/a2c-smcp/smcp-go/computer/blob"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// Defaults as the references'.
const (
	// DefaultMaxFileBytes is the largest skill file served.
	DefaultMaxFileBytes = 100 << 20
	// SkillFile is the file a request without rel_path names.
	SkillFile = "SKILL.md"
	// maxFrontMatter bounds the YAML parsed from a SKILL.md.
	maxFrontMatter = 1 << 20
	// maxEntries bounds the files walked per skill for the digest.
	maxEntries = 10000
)

// forbidden are file names never served, compared case-insensitively.
var forbidden = []string{".skillenv"}

// Option configures a Set.
type Option func(*Set)

// WithHome adds a skill home: its user folder's skills.
func WithHome(dir string) Option { return func(s *Set) { s.home = dir } }

// WithPlugin adds the skills of a plugin directory under the plugin's name.
func WithPlugin(name, dir string) Option {
	return func(s *Set) { s.plugins = append(s.plugins, plugin{name, dir}) }
}

// WithSpool sets the spool large or binary files are served from; without
// one they are refused as too_large.
func WithSpool(sp *blob.Spool) Option { return func(s *Set) { s.spool = sp } }

// WithInlineBudget sets the largest text returned as body (default
// blob.DefaultInlineBudget).
func WithInlineBudget(n int64) Option {
	return func(s *Set) {
		if n > 0 {
			s.inline = n
		}
	}
}

// WithMaxFileBytes sets the largest file served (default
// DefaultMaxFileBytes).
func WithMaxFileBytes(n int64) Option {
	return func(s *Set) {
		if n > 0 {
			s.maxFile = n
		}
	}
}

// WithMCPServers sets the MCP servers whose skill:// resources are skills
// (mcp:<bundle_id>:<skill>); list is called at each listing.
func WithMCPServers(list func() []MCPServer) Option { return func(s *Set) { s.mcp = list } }

// WithOnChange sets the function Rescan calls when the skills changed.
func WithOnChange(fn func()) Option { return func(s *Set) { s.onChange = fn } }

// WithCacheDir sets the directory the Set owns for what it fetches: the
// clones of the marketplaces (<dir>/marketplace/) and the expanded archive
// skills of the MCP servers (<dir>/mcp/<bundle_id>/<skill>/), as the
// references lay them out in a skill home. Without it neither is offered.
func WithCacheDir(dir string) Option { return func(s *Set) { s.cache = dir } }

// WithMarketplace adds a git marketplace of plugins (see Marketplace),
// cloned at RefreshMarketplaces.
func WithMarketplace(m Marketplace) Option {
	return func(s *Set) { s.markets = append(s.markets, m) }
}

// WithFetchTimeout bounds each git command and each archive download
// (default DefaultFetchTimeout, the references' 120 s).
func WithFetchTimeout(d time.Duration) Option {
	return func(s *Set) {
		if d > 0 {
			s.fetchTimeout = d
		}
	}
}

// WithMaxCloneBytes bounds the size of a marketplace's or plugin's clone
// (default DefaultMaxCloneBytes); a clone growing past it is stopped and
// removed.
func WithMaxCloneBytes(n int64) Option {
	return func(s *Set) {
		if n > 0 {
			s.maxClone = n
		}
	}
}

// WithArchiveLimits bounds the archive skills of the MCP servers (zero
// fields keep their defaults).
func WithArchiveLimits(l ArchiveLimits) Option { return func(s *Set) { s.archLim = l } }

// WithHTTPClient sets the client archive skills are downloaded with
// (default one with the WithFetchTimeout bound).
func WithHTTPClient(c *http.Client) Option { return func(s *Set) { s.http = c } }

// Bounds of what is fetched.
const (
	// DefaultFetchTimeout bounds a git command or an archive download.
	DefaultFetchTimeout = 120 * time.Second
	// DefaultMaxCloneBytes bounds a clone.
	DefaultMaxCloneBytes = 256 << 20
)

type plugin struct{ name, dir string }

// Set is a Computer's skills. It is safe for concurrent use.
type Set struct {
	home     string
	plugins  []plugin
	spool    *blob.Spool
	inline   int64
	maxFile  int64
	onChange func()
	mcp      func() []MCPServer

	cache        string
	markets      []Marketplace
	fetchTimeout time.Duration
	maxClone     int64
	archLim      ArchiveLimits
	http         *http.Client

	refreshMu sync.Mutex // one RefreshMCP or RefreshMarketplaces at a time
	archives  map[string]archived

	mu       sync.Mutex
	digest   string
	mcpFound []found    // the MCP servers' skills as RefreshMCP found them
	mpFound  []mpPlugin // the marketplaces' plugins as RefreshMarketplaces found them
}

// New returns the skills of the given sources.
func New(opts ...Option) *Set {
	s := &Set{inline: blob.DefaultInlineBudget, maxFile: DefaultMaxFileBytes, fetchTimeout: DefaultFetchTimeout,
		maxClone: DefaultMaxCloneBytes, archives: map[string]archived{}}
	for _, o := range opts {
		o(s)
	}
	s.archLim = s.archLim.withDefaults(s.maxFile)
	if s.http == nil {
		s.http = &http.Client{Timeout: s.fetchTimeout}
	}
	s.digest, _ = s.scan(context.Background())
	return s
}

var kebab = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// ValidName reports whether name follows the skill naming rules: <skill>,
// <plugin>:<skill> or mcp:<bundle_id>:<skill>.
func ValidName(name string) bool {
	seg := strings.Split(name, ":")
	ok := func(s string) bool { return len(s) <= 64 && kebab.MatchString(s) }
	switch len(seg) {
	case 1:
		return ok(seg[0])
	case 2:
		return ok(seg[0]) && ok(seg[1])
	case 3:
		return seg[0] == "mcp" && protocol.ValidateBundleID(seg[1]) == nil && ok(seg[2])
	}
	return false
}

type found struct {
	ref protocol.A2CSkillRef
	dir string // a local folder, or
	// an MCP server's skill:// resources: its files by relative path.
	srv   MCPServer
	files map[string]string
}

// skills lists the skills of every source, the first of a name winning.
func (s *Set) skills(ctx context.Context) []found {
	var out []found
	seen := map[string]bool{}
	// add lists dir's skill folders; with confine, only those inside it,
	// links followed (a fetched repository's links lead nowhere else).
	add := func(source, prefix, dir, confine, version string) {
		if confine != "" && !within(dir, confine) {
			return
		}
		names, _ := readDirNames(dir)
		for _, n := range names {
			if len(n) > 64 || !kebab.MatchString(n) || seen[prefix+n] {
				continue
			}
			d := filepath.Join(dir, n)
			if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
				continue
			}
			if confine != "" && !within(d, confine) {
				continue
			}
			ref, ok := readRef(d)
			if !ok {
				continue
			}
			ref.Name, ref.Source, ref.Version = prefix+n, source, version
			seen[ref.Name] = true
			out = append(out, found{ref: ref, dir: d})
		}
	}
	if s.home != "" {
		add("user", "", filepath.Join(s.home, "user"), "", "")
	}
	for _, p := range s.plugins {
		if len(p.name) <= 64 && kebab.MatchString(p.name) {
			add("marketplace", p.name+":", filepath.Join(p.dir, "skills"), "", "")
		}
	}
	s.mu.Lock()
	cached, markets := s.mcpFound, s.mpFound
	s.mu.Unlock()
	for _, p := range markets {
		for _, d := range p.containers {
			add("marketplace:"+p.market, p.name+":", d, p.confine, p.version)
		}
	}
	for _, f := range cached {
		if !seen[f.ref.Name] {
			seen[f.ref.Name] = true
			out = append(out, f)
		}
	}
	return out
}

// RefreshMCP lists the skills of the WithMCPServers servers again (their
// resources/list, and each skill's SKILL.md) and, when they changed, calls
// the WithOnChange callback, as Rescan does. Between refreshes the MCP
// servers' skills are listed as the last refresh found them, so that
// neither a listing nor a periodic rescan asks every server for its
// resources; the Computer refreshes when a server comes up, goes down or
// says its resource list changed.
func (s *Set) RefreshMCP(ctx context.Context) bool {
	s.refreshMu.Lock()
	var list []found
	if s.mcp != nil {
		for _, srv := range s.mcp() {
			list = append(list, s.mcpSkills(ctx, srv)...)
		}
	}
	s.pruneArchives(list)
	s.mu.Lock()
	s.mcpFound = list
	s.mu.Unlock()
	s.refreshMu.Unlock()
	return s.Rescan(ctx)
}

func readDirNames(dir string) ([]string, error) {
	es, err := os.ReadDir(dir)
	names := make([]string, 0, len(es))
	for _, e := range es {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names, err
}

// readRef reads a skill folder's SKILL.md front matter; a skill without a
// description is not one.
func readRef(dir string) (protocol.A2CSkillRef, bool) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return protocol.A2CSkillRef{}, false
	}
	defer root.Close()
	f, err := root.Open(SkillFile)
	if err != nil {
		return protocol.A2CSkillRef{}, false
	}
	defer f.Close()
	head, _ := io.ReadAll(io.LimitReader(f, maxFrontMatter+8))
	ref, _, ok := refOf(head)
	abs, _ := filepath.Abs(dir)
	ref.Path = abs
	return ref, ok
}

// refOf reads a SKILL.md's front matter into a ref (no name, source or
// path) and returns the front matter too; a skill without a description
// is not one.
func refOf(head []byte) (protocol.A2CSkillRef, map[string]any, bool) {
	fm := frontMatter(head)
	desc := scalar(fm["description"])
	if desc == "" {
		return protocol.A2CSkillRef{}, fm, false
	}
	ref := protocol.A2CSkillRef{Description: desc, License: scalar(fm["license"]), Compatibility: scalar(fm["compatibility"])}
	at, has := fm["allowed-tools"]
	if !has {
		at, has = fm["allowed_tools"]
	}
	if has && at != nil {
		if l, ok := at.([]any); ok {
			for _, v := range l {
				ref.AllowedTools = append(ref.AllowedTools, scalar(v))
			}
		} else {
			ref.AllowedTools = []string{scalar(at)}
		}
	}
	if l, ok := fm["tags"].([]any); ok {
		tags := []string{}
		for _, v := range l {
			t, ok := v.(string)
			if !ok {
				tags = nil
				break
			}
			tags = append(tags, t)
		}
		ref.Tags = tags
	}
	if m, ok := fm["metadata"].(map[string]any); ok {
		ref.SkillMetadata = m
	}
	return ref, fm, true
}

func scalar(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	default:
		return fmt.Sprint(x)
	}
}

// frontMatter parses the YAML between a first line "---" and the next one;
// nil when there is none or it is not a mapping.
func frontMatter(text []byte) map[string]any {
	block, _, ok := splitFrontMatter(text)
	if !ok || len(block) > maxFrontMatter {
		return nil
	}
	var m map[string]any
	if yaml.Unmarshal(block, &m) != nil {
		return nil
	}
	return m
}

// splitFrontMatter returns the front matter's YAML and the body after it.
func splitFrontMatter(text []byte) (block, body []byte, ok bool) {
	line, rest, _ := bytes.Cut(text, []byte("\n"))
	if !bytes.HasPrefix(text, []byte("---")) || string(bytes.TrimSpace(line)) != "---" {
		return nil, text, false
	}
	off := len(line) + 1
	for len(rest) > 0 {
		l, r, _ := bytes.Cut(rest, []byte("\n"))
		if string(bytes.TrimSpace(l)) == "---" {
			end := off + len(l) + 1
			return text[len(line)+1 : off], text[min(end, len(text)):], true
		}
		off += len(l) + 1
		rest = r
	}
	return nil, text, false
}

// List answers client:get_skills: the skills as the sources hold them now.
func (s *Set) List(ctx context.Context) []protocol.A2CSkillRef {
	out := []protocol.A2CSkillRef{}
	for _, f := range s.skills(ctx) {
		out = append(out, f.ref)
	}
	return out
}

func resourceError(reason, rel string) *protocol.Error {
	return protocol.NewSkillResourceNotAccessible("Skill resource not accessible").With("reason", reason).With("rel_path", rel)
}

// Get answers client:get_skill for a request from office (the office a
// blob handle is minted for).
func (s *Set) Get(ctx context.Context, office string, req protocol.GetSkillReq) (protocol.GetSkillRet, error) {
	if !ValidName(req.Name) {
		return protocol.GetSkillRet{}, protocol.NewSkillNameInvalid("Invalid skill name").With("name", req.Name)
	}
	var sk *found
	for _, f := range s.skills(ctx) {
		if f.ref.Name == req.Name {
			sk = &f
			break
		}
	}
	if sk == nil {
		return protocol.GetSkillRet{}, protocol.NewMCPServerNotFound("Skill not found").With("name", req.Name)
	}
	rel := req.RelPath
	if rel == "" {
		rel = SkillFile
	}
	clean, err := cleanRel(rel)
	if err != nil {
		return protocol.GetSkillRet{}, resourceError("traversal", rel)
	}
	if isForbidden(clean) {
		return protocol.GetSkillRet{}, resourceError("forbidden", rel)
	}
	if sk.srv != nil {
		return s.getMCP(ctx, office, req, sk, rel, clean)
	}
	dir := sk.dir
	root, err := os.OpenRoot(dir)
	if err != nil {
		return protocol.GetSkillRet{}, resourceError("not_found", rel)
	}
	defer root.Close()
	// A symlink is followed only within the skill's folder; its target's
	// name is checked as the name asked for is.
	if target, err := resolveInRoot(root, clean); err != nil {
		if errors.Is(err, errEscapes) {
			return protocol.GetSkillRet{}, resourceError("traversal", rel)
		}
		return protocol.GetSkillRet{}, resourceError("not_found", rel)
	} else if isForbidden(target) {
		return protocol.GetSkillRet{}, resourceError("forbidden", rel)
	}
	f, err := root.Open(clean)
	if err != nil {
		if isEscape(err) {
			return protocol.GetSkillRet{}, resourceError("traversal", rel)
		}
		return protocol.GetSkillRet{}, resourceError("not_found", rel)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return protocol.GetSkillRet{}, resourceError("not_found", rel)
	}
	if fi.Size() > s.maxFile {
		return protocol.GetSkillRet{}, resourceError("too_large", rel).With("total_size", fi.Size())
	}
	mt := mimeOf(clean)
	entry := path.Base(clean) == SkillFile
	if entry {
		mt = "text/markdown"
	}
	// A file that is served as it is on disk and cannot be inline is
	// streamed to the spool: memory stays bounded whatever its size.
	if !entry && (fi.Size() > s.inline || !isText(mt)) {
		if s.spool == nil {
			return protocol.GetSkillRet{}, resourceError("too_large", rel).With("total_size", fi.Size())
		}
		h, sum, err := s.spool.PutFrom(office, f, fi.Size(), mt)
		if err != nil {
			return protocol.GetSkillRet{}, resourceError("too_large", rel).With("total_size", fi.Size())
		}
		return protocol.GetSkillRet{Name: req.Name, RelPath: rel, MimeType: mt, TotalSize: int(fi.Size()), Sha256: sum, BlobHandle: &h, ReqID: req.ReqID}, nil
	}
	data, err := io.ReadAll(io.LimitReader(f, s.maxFile+1))
	if err != nil {
		return protocol.GetSkillRet{}, resourceError("not_found", rel)
	}
	if int64(len(data)) > s.maxFile {
		return protocol.GetSkillRet{}, resourceError("too_large", rel).With("total_size", len(data))
	}
	return s.answer(office, req, rel, mt, entry, data)
}

// answer is the get_skill answer for a file's bytes: SKILL.md without its
// front matter; text within the budget as body, else through the spool.
func (s *Set) answer(office string, req protocol.GetSkillReq, rel, mt string, entry bool, data []byte) (protocol.GetSkillRet, error) {
	if entry {
		_, data, _ = splitFrontMatter(data)
		mt = "text/markdown"
	}
	sum := sha256.Sum256(data)
	ret := protocol.GetSkillRet{Name: req.Name, RelPath: rel, MimeType: mt, TotalSize: len(data), Sha256: hex.EncodeToString(sum[:]), ReqID: req.ReqID}
	if isText(mt) && int64(len(data)) <= s.inline && utf8.Valid(data) {
		body := string(data)
		ret.Body = &body
		return ret, nil
	}
	if s.spool == nil {
		return protocol.GetSkillRet{}, resourceError("too_large", rel).With("total_size", len(data))
	}
	h, _, err := s.spool.Put(office, data, mt)
	if err != nil {
		return protocol.GetSkillRet{}, resourceError("too_large", rel).With("total_size", len(data))
	}
	ret.BlobHandle = &h
	return ret, nil
}

// cleanRel checks a request's relative POSIX path lexically: no
// backslash, no absolute path, no "..", no ":" in a segment.
func cleanRel(rel string) (string, error) {
	if strings.ContainsAny(rel, "\\\x00") || strings.HasPrefix(rel, "/") {
		return "", errEscapes
	}
	var segs []string
	for _, seg := range strings.Split(rel, "/") {
		if seg == "" || seg == "." {
			continue
		}
		if seg == ".." || strings.Contains(seg, ":") {
			return "", errEscapes
		}
		segs = append(segs, seg)
	}
	if len(segs) == 0 {
		return "", errEscapes
	}
	return strings.Join(segs, "/"), nil
}

var errEscapes = errors.New("skills: path escapes the skill")

// isEscape reports whether err is os.Root's refusal of a path leading
// outside it.
func isEscape(err error) bool {
	return err != nil && strings.Contains(err.Error(), "path escapes from parent")
}

// resolveInRoot follows the symlinks of rel inside root and returns the
// final path, relative; errEscapes when one leads outside.
func resolveInRoot(root *os.Root, rel string) (string, error) {
	segs := strings.Split(rel, "/")
	var cur []string
	for hops := 0; len(segs) > 0; {
		seg := segs[0]
		segs = segs[1:]
		if seg == "" || seg == "." {
			continue
		}
		if seg == ".." {
			if len(cur) == 0 {
				return "", errEscapes
			}
			cur = cur[:len(cur)-1]
			continue
		}
		p := strings.Join(append(cur, seg), "/")
		fi, err := root.Lstat(p)
		if err != nil {
			if isEscape(err) {
				return "", errEscapes
			}
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = append(cur, seg)
			continue
		}
		if hops++; hops > 40 {
			return "", errEscapes
		}
		target, err := root.Readlink(p)
		if err != nil {
			return "", err
		}
		if strings.HasPrefix(target, "/") || filepath.IsAbs(target) {
			return "", errEscapes
		}
		segs = append(strings.Split(filepath.ToSlash(target), "/"), segs...)
	}
	return strings.Join(cur, "/"), nil
}

func isForbidden(rel string) bool {
	base := strings.ToLower(path.Base(rel))
	for _, f := range forbidden {
		if base == f {
			return true
		}
	}
	return false
}

func mimeOf(rel string) string {
	switch strings.ToLower(path.Ext(rel)) {
	case ".md", ".markdown":
		return "text/markdown"
	case ".txt", "":
		return "text/plain"
	case ".json":
		return "application/json"
	case ".yaml", ".yml":
		return "application/yaml"
	case ".py":
		return "text/x-python"
	case ".sh":
		return "text/x-shellscript"
	}
	if t := mime.TypeByExtension(path.Ext(rel)); t != "" {
		t, _, _ = strings.Cut(t, ";")
		return t
	}
	return "application/octet-stream"
}

func isText(mt string) bool {
	switch mt {
	case "application/json", "application/yaml", "application/xml", "application/javascript", "application/toml":
		return true
	}
	return strings.HasPrefix(mt, "text/")
}

// scan is the digest of the skills: names and paths, and for a local
// folder the names, sizes and modification times of its files, for an MCP
// server's skill the URIs of its files.
func (s *Set) scan(ctx context.Context) (string, []found) {
	h := sha256.New()
	list := s.skills(ctx)
	for _, f := range list {
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00", f.ref.Name, f.ref.Path, f.ref.Description)
		for _, rel := range slices.Sorted(maps.Keys(f.files)) {
			fmt.Fprintf(h, "%s\x00", f.files[rel])
		}
		if f.dir == "" {
			continue
		}
		n := 0
		_ = filepath.WalkDir(f.dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if n++; n > maxEntries {
				return filepath.SkipAll
			}
			if info, err := d.Info(); err == nil {
				fmt.Fprintf(h, "%s\x00%d\x00%d\x00", p, info.Size(), info.ModTime().UnixNano())
			}
			return nil
		})
	}
	return hex.EncodeToString(h.Sum(nil)), list
}

// Rescan reports whether the skills changed since New or the previous
// Rescan, and then calls the WithOnChange callback.
func (s *Set) Rescan(ctx context.Context) bool {
	d, _ := s.scan(ctx)
	s.mu.Lock()
	changed := d != s.digest
	s.digest = d
	s.mu.Unlock()
	if changed && s.onChange != nil {
		s.onChange()
	}
	return changed
}

// Watch rescans every interval until ctx ends (the MCP servers' skills as
// last refreshed: RefreshMCP).
func (s *Set) Watch(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.Rescan(ctx)
		}
	}
}
