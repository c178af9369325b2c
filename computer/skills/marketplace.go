package skills

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
)

// Marketplace is a git repository of plugins, as a reference Computer's
// settings.json declares one under extraKnownMarketplaces (see Settings):
// its catalog, .tfrobot-plugin/marketplace.json, lists plugins, each with
// a source (a folder of the repository, or a repository of its own); a
// plugin's skills/<skill>/SKILL.md folders are the skills
// <plugin>:<skill>, source "marketplace:<name>". The repositories are
// cloned with the system git into the WithCacheDir directory:
// <cache>/marketplace/<name>/, and a plugin with a repository of its own
// <cache>/marketplace/.plugins/<name>/<plugin>/, as the references lay
// them out.
type Marketplace struct {
	// Name is the marketplace's name (strict kebab case).
	Name string
	// URL is the git URL of its repository: ssh, git, http(s) or file
	// scheme, or scp-like user@host:path.
	URL string
	// Plugins are the plugins whose skills are offered; nil offers every
	// plugin of the catalog, an empty list none.
	Plugins []string
	// AutoUpdate pulls the clones at each RefreshMarketplaces; without it
	// a clone is made once and kept.
	AutoUpdate bool
}

// Settings is the part of a reference Computer's settings.json that
// declares marketplaces, in its keys, so that one is used as it is:
//
//	{"extraKnownMarketplaces": {"acme": {"source": {"type": "git", "url": "https://…"}, "autoUpdate": true}},
//	 "installedPlugins": ["audit@acme"],
//	 "enabledPlugins": {"audit@acme": true}}
//
// A plugin's skills are offered when it is installed and enabled, as a
// reference Computer offers them.
type Settings struct {
	ExtraKnownMarketplaces map[string]MarketplaceEntry `json:"extraKnownMarketplaces,omitempty"`
	InstalledPlugins       []string                    `json:"installedPlugins,omitempty"`
	EnabledPlugins         map[string]bool             `json:"enabledPlugins,omitempty"`
}

// MarketplaceEntry is one extraKnownMarketplaces declaration.
type MarketplaceEntry struct {
	Source     GitSource `json:"source"`
	AutoUpdate bool      `json:"autoUpdate,omitempty"`
}

// GitSource is a marketplace's source: {"type": "git", "url": …}.
type GitSource struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

// maxManifest bounds a settings file, a catalog or a plugin.json read.
const maxManifest = 1 << 20

// ReadSettings reads a reference settings.json (see Settings). Other keys
// are ignored; a malformed file, or a marketplace whose name, source type
// or URL is not valid, is a 4000 error naming it.
func ReadSettings(file string) (Settings, error) {
	f, err := os.Open(file)
	if err != nil {
		return Settings{}, protocol.NewBadRequest("skill settings: %v", err).Wrap(err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxManifest+1))
	if err != nil {
		return Settings{}, protocol.NewBadRequest("skill settings: %v", err).Wrap(err)
	}
	if len(data) > maxManifest {
		return Settings{}, protocol.NewBadRequest("skill settings %s: larger than %d bytes", file, maxManifest)
	}
	var s Settings
	if err := json.Unmarshal(data, &s); err != nil {
		return Settings{}, protocol.NewBadRequest("skill settings %s: %v", file, err).Wrap(err)
	}
	for name, e := range s.ExtraKnownMarketplaces {
		switch {
		case !validSegment(name):
			return Settings{}, protocol.NewBadRequest("skill settings %s: marketplace name %q is not strict kebab case", file, name).With("name", name)
		case e.Source.Type != "git":
			return Settings{}, protocol.NewBadRequest("skill settings %s: marketplace %q: source type %q is not \"git\"", file, name, e.Source.Type).With("name", name)
		case !validGitURL(e.Source.URL):
			return Settings{}, protocol.NewBadRequest("skill settings %s: marketplace %q: %q is not a git URL", file, name, redactURL(e.Source.URL)).With("name", name)
		}
	}
	return s, nil
}

// Marketplaces are the declared marketplaces, each with its installed and
// enabled plugins.
func (s Settings) Marketplaces() []Marketplace {
	installed := map[string]bool{}
	for _, id := range s.InstalledPlugins {
		installed[id] = true
	}
	var out []Marketplace
	for _, name := range slices.Sorted(maps.Keys(s.ExtraKnownMarketplaces)) {
		e := s.ExtraKnownMarketplaces[name]
		m := Marketplace{Name: name, URL: e.Source.URL, AutoUpdate: e.AutoUpdate, Plugins: []string{}}
		for _, id := range slices.Sorted(maps.Keys(s.EnabledPlugins)) {
			if p, mp, ok := strings.Cut(id, "@"); ok && mp == name && s.EnabledPlugins[id] && installed[id] {
				m.Plugins = append(m.Plugins, p)
			}
		}
		out = append(out, m)
	}
	return out
}

func validSegment(s string) bool { return len(s) <= 64 && kebab.MatchString(s) }

var (
	gitScheme  = regexp.MustCompile(`^(?:ssh|git|https?|file)://.+$`)
	gitScpLike = regexp.MustCompile(`^[\w.+-]+@[\w.-]+:.+$`)
)

// validGitURL accepts the URLs the references do: ssh, git, http(s) or
// file scheme, or scp-like; never one starting with "-" (an option).
func validGitURL(u string) bool {
	return !strings.HasPrefix(u, "-") && strings.TrimSpace(u) == u && (gitScheme.MatchString(u) || gitScpLike.MatchString(u))
}

// redactURL hides a URL's password (user:token@host) for logs and errors.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	if _, has := u.User.Password(); !has {
		return raw
	}
	return u.Redacted()
}

// redactErr is err's text with raw's password hidden.
func redactErr(err error, raw string) string {
	if err == nil {
		return ""
	}
	return strings.ReplaceAll(err.Error(), raw, redactURL(raw))
}

// gitEnv is the environment git runs in: never a prompt for credentials
// (it fails instead of waiting), and only the usual transports.
func gitEnv() []string {
	env := os.Environ()
	env = append(env, "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "SSH_ASKPASS=",
		"GIT_ALLOW_PROTOCOL=file:git:http:https:ssh", "GIT_CONFIG_NOSYSTEM=1")
	if os.Getenv("GIT_SSH_COMMAND") == "" {
		env = append(env, "GIT_SSH_COMMAND=ssh -oBatchMode=yes")
	}
	return env
}

// errGit is the class of the failures of git.
var errGit = errors.New("skills: git failed")

// git runs the system git with args, within the WithFetchTimeout bound;
// when watch is set, a clone there larger than WithMaxCloneBytes stops it.
// Its output is returned; a failure's message has secret has hidden.
func (s *Set) git(ctx context.Context, secret, watch string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, s.fetchTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Env = gitEnv()
	cmd.Stdin = nil
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &limitedBuffer{b: &out, n: 1 << 20}, &limitedBuffer{b: &errb, n: 64 << 10}
	ownGroup(cmd)
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("%w: %v", errGit, err)
	}
	tooBig := make(chan struct{})
	if watch != "" {
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			t := time.NewTicker(time.Second)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					if dirSize(watch, s.maxClone) > s.maxClone {
						close(tooBig)
						cancel()
						return
					}
				}
			}
		}()
	}
	err := cmd.Wait()
	select {
	case <-tooBig:
		return "", fmt.Errorf("%w: git %s: the clone exceeds %d bytes", errGit, args[0], s.maxClone)
	default:
	}
	if ctx.Err() == context.DeadlineExceeded {
		return "", fmt.Errorf("%w: git %s timed out after %s", errGit, args[0], s.fetchTimeout)
	}
	if err != nil {
		msg := strings.TrimSpace(errb.String())
		if secret != "" {
			msg = strings.ReplaceAll(msg, secret, redactURL(secret))
		}
		return "", fmt.Errorf("%w: git %s: %v: %s", errGit, args[0], err, msg)
	}
	return out.String(), nil
}

// limitedBuffer keeps the first n bytes written to it.
type limitedBuffer struct {
	b *bytes.Buffer
	n int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.n - l.b.Len(); room > 0 {
		l.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// dirSize is the bytes of the files under dir, counting stopped past
// limit.
func dirSize(dir string, limit int64) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if info, err := d.Info(); err == nil && info.Mode().IsRegular() {
			n += info.Size()
		}
		if n > limit {
			return filepath.SkipAll
		}
		return nil
	})
	return n
}

// clone clones url into dest (made anew): into a sibling first, renamed
// when complete, so that a clone cut short is never taken for one.
func (s *Set) clone(ctx context.Context, url, dest string, flags ...string) error {
	if err := os.MkdirAll(filepath.Dir(dest), 0o700); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dest), ".clone-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	args := append(append([]string{"clone"}, flags...), "--", url, tmp)
	if _, err := s.git(ctx, url, tmp, args...); err != nil {
		// As the references: an ssh URL that fails is tried once over https.
		https := sshToHTTPS(url)
		if https == "" || ctx.Err() != nil {
			return err
		}
		slog.Info("skills: git clone failed, trying https", "url", redactURL(url), "https", redactURL(https), "err", err)
		if err := os.RemoveAll(tmp); err != nil {
			return err
		}
		args[len(args)-2] = https
		if _, err := s.git(ctx, https, tmp, args...); err != nil {
			return err
		}
	}
	if n := dirSize(tmp, s.maxClone); n > s.maxClone {
		return fmt.Errorf("%w: the clone of %s exceeds %d bytes", errGit, redactURL(url), s.maxClone)
	}
	if err := os.RemoveAll(dest); err != nil {
		return err
	}
	return os.Rename(tmp, dest)
}

var (
	sshScheme  = regexp.MustCompile(`^ssh://(?:[^@/]+@)?([^/:]+)(?::\d+)?/(.+)$`)
	sshScpLike = regexp.MustCompile(`^[\w.+-]+@([\w.-]+):(.+)$`)
)

// sshToHTTPS is the https URL the references fall back to for an ssh one
// (ssh://[user@]host[:port]/path or user@host:path), "" for another.
func sshToHTTPS(u string) string {
	for _, re := range []*regexp.Regexp{sshScheme, sshScpLike} {
		if m := re.FindStringSubmatch(u); m != nil {
			return "https://" + m[1] + "/" + m[2]
		}
	}
	return ""
}

// head is the commit a clone is at, "" when unknown.
func (s *Set) head(ctx context.Context, dir string) string {
	out, err := s.git(ctx, "", "", "-C", dir, "rev-parse", "HEAD")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

// mpPlugin is a marketplace plugin found by RefreshMarketplaces.
type mpPlugin struct {
	market, name, dir, version string
	containers                 []string // its folders of skill folders
	confine                    string   // the clone the plugin's skills must be inside
}

// RefreshMarketplaces clones the WithMarketplace repositories that are not
// cloned yet (and pulls them when AutoUpdate), reads their catalogs and
// clones the plugins that have repositories of their own; then, when the
// skills changed, calls the WithOnChange callback, as Rescan does. A
// marketplace or plugin that fails (an unreachable URL, a timeout, a
// malformed catalog, a clone too large) is logged and offers no skills;
// the others are not held up. Without WithCacheDir nothing is cloned.
func (s *Set) RefreshMarketplaces(ctx context.Context) bool {
	s.refreshMu.Lock()
	var list []mpPlugin
	for _, m := range s.markets {
		if s.cache == "" {
			slog.Warn("skills: no cache directory, marketplace not cloned", "marketplace", m.Name)
			continue
		}
		ps, err := s.stageMarketplace(ctx, m)
		if err != nil {
			slog.Warn("skills: marketplace not offered", "marketplace", m.Name, "url", redactURL(m.URL), "err", err)
		}
		list = append(list, ps...)
	}
	s.mu.Lock()
	s.mpFound = list
	s.mu.Unlock()
	s.refreshMu.Unlock()
	return s.Rescan(ctx)
}

func (s *Set) stageMarketplace(ctx context.Context, m Marketplace) ([]mpPlugin, error) {
	if !validSegment(m.Name) {
		return nil, fmt.Errorf("marketplace name %q is not strict kebab case", m.Name)
	}
	if !validGitURL(m.URL) {
		return nil, fmt.Errorf("%q is not a git URL", redactURL(m.URL))
	}
	dir := filepath.Join(s.cache, "marketplace", m.Name)
	if _, err := os.Stat(dir); err != nil {
		if err := s.clone(ctx, m.URL, dir, "--depth", "1"); err != nil {
			return nil, err
		}
	} else if m.AutoUpdate {
		if _, err := s.git(ctx, m.URL, dir, "-C", dir, "pull", "--ff-only"); err != nil {
			slog.Info("skills: marketplace pull failed, cloning it again", "marketplace", m.Name, "err", err)
			if err := s.clone(ctx, m.URL, dir, "--depth", "1"); err != nil {
				return nil, err
			}
		}
	}
	sha := s.head(ctx, dir)
	var catalog struct {
		Metadata struct {
			PluginRoot string `json:"pluginRoot"`
		} `json:"metadata"`
		Plugins []map[string]any `json:"plugins"`
	}
	if err := readJSONIn(dir, ".tfrobot-plugin/marketplace.json", &catalog); err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	base := catalog.Metadata.PluginRoot
	if strings.TrimSpace(base) == "" {
		base = "./plugins"
	}
	var want map[string]bool
	if m.Plugins != nil {
		want = map[string]bool{}
		for _, p := range m.Plugins {
			want[p] = true
		}
	}
	var out []mpPlugin
	seen := map[string]bool{}
	for _, e := range catalog.Plugins {
		name, _ := e["name"].(string)
		name = strings.TrimSpace(name)
		if !validSegment(name) || seen[name] || (want != nil && !want[name]) {
			continue
		}
		seen[name] = true
		p, err := s.stagePlugin(ctx, m, name, e, dir, base, sha)
		if err != nil {
			slog.Warn("skills: marketplace plugin not offered", "marketplace", m.Name, "plugin", name, "err", err)
			continue
		}
		out = append(out, p)
	}
	return out, nil
}

// readJSONIn reads a JSON file inside dir (through os.Root: no link leads
// outside), at most maxManifest bytes.
func readJSONIn(dir, rel string, v any) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	f, err := root.Open(rel)
	if err != nil {
		return err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxManifest+1))
	if err != nil {
		return err
	}
	if len(data) > maxManifest {
		return fmt.Errorf("%s is larger than %d bytes", rel, maxManifest)
	}
	return json.Unmarshal(data, v)
}

// pluginSource is a catalog entry's source, as the references resolve
// it: a folder of the marketplace's repository (rel), or a repository of
// its own (url, with ref, sha, subdir).
type pluginSource struct {
	rel, url, ref, sha, subdir string
}

var fullSHA = regexp.MustCompile(`^[0-9a-fA-F]{40}$`)

// relPath normalizes a repository-relative path: no "..", not empty.
func relPath(p string) (string, error) {
	var segs []string
	for _, seg := range strings.Split(strings.ReplaceAll(p, "\\", "/"), "/") {
		switch seg {
		case "", ".":
			continue
		case "..":
			return "", fmt.Errorf("path %q leads outside the repository", p)
		}
		segs = append(segs, seg)
	}
	if len(segs) == 0 {
		return "", fmt.Errorf("path %q is the repository's root", p)
	}
	return strings.Join(segs, "/"), nil
}

// shorthand turns owner/repo into https://<host>/owner/repo.git.
func shorthand(repo, host string) (string, error) {
	repo = strings.TrimSpace(repo)
	if strings.Contains(repo, "://") || strings.Contains(repo, "@") || strings.Count(repo, "/") != 1 ||
		strings.HasPrefix(repo, "/") || strings.HasSuffix(repo, "/") || strings.ContainsAny(repo, " \t\n") {
		return "", fmt.Errorf("repo %q is not an owner/repo shorthand", repo)
	}
	return "https://" + host + "/" + strings.TrimSuffix(repo, ".git") + ".git", nil
}

// resolveSource reads a catalog entry's source: a string "./path" or a
// bare name (under the catalog's pluginRoot), or an object whose "source"
// is url, github, cnb or git-subdir.
func resolveSource(raw any, base string) (pluginSource, error) {
	if s, ok := raw.(string); ok {
		s = strings.TrimSpace(s)
		switch {
		case strings.HasPrefix(s, "./"):
			rel, err := relPath(s[2:])
			return pluginSource{rel: rel}, err
		case s != "" && s != "." && s != ".." && !strings.Contains(s, "/"):
			rel, err := relPath(base + "/" + s)
			return pluginSource{rel: rel}, err
		}
		return pluginSource{}, fmt.Errorf("source %q is neither ./path nor a plugin name", s)
	}
	o, ok := raw.(map[string]any)
	if !ok {
		return pluginSource{}, fmt.Errorf("source is neither a path nor an object")
	}
	str := func(k string) string { v, _ := o[k].(string); return strings.TrimSpace(v) }
	var ps pluginSource
	ps.ref, ps.sha = str("ref"), strings.ToLower(str("sha"))
	if _, has := o["ref"]; has && ps.ref == "" {
		return ps, fmt.Errorf("ref is not a non-empty string")
	}
	if _, has := o["sha"]; has && !fullSHA.MatchString(ps.sha) {
		return ps, fmt.Errorf("sha is not a full 40-hex commit")
	}
	if strings.HasPrefix(ps.ref, "-") {
		return ps, fmt.Errorf("ref %q is not a branch or tag", ps.ref)
	}
	var err error
	switch kind := str("source"); kind {
	case "url":
		if ps.url = str("url"); !validGitURL(ps.url) {
			return ps, fmt.Errorf("url %q is not a git URL", redactURL(ps.url))
		}
	case "github":
		ps.url, err = shorthand(str("repo"), "github.com")
	case "cnb":
		ps.url, err = shorthand(str("repo"), "cnb.cool")
	case "git-subdir":
		if ps.url = str("url"); !validGitURL(ps.url) {
			if ps.url, err = shorthand(ps.url, "github.com"); err != nil {
				return ps, err
			}
		}
		ps.subdir, err = relPath(str("path"))
	default:
		return ps, fmt.Errorf("unknown source %q (expect url, github, git-subdir or cnb)", kind)
	}
	return ps, err
}

// stagePlugin finds a catalog entry's plugin folder, cloning it when it
// has a repository of its own.
func (s *Set) stagePlugin(ctx context.Context, m Marketplace, name string, e map[string]any, catalog, base, sha string) (mpPlugin, error) {
	src, err := resolveSource(e["source"], base)
	if err != nil {
		return mpPlugin{}, err
	}
	p := mpPlugin{market: m.Name, name: name, version: sha, confine: catalog}
	if src.url == "" {
		p.dir = filepath.Join(catalog, filepath.FromSlash(src.rel))
	} else {
		ext := filepath.Join(s.cache, "marketplace", ".plugins", m.Name, name)
		head := ""
		if _, err := os.Stat(ext); err == nil {
			head = s.head(ctx, ext)
		}
		reuse := head != "" && (src.sha == head || src.sha == "")
		if reuse && src.sha == "" && m.AutoUpdate {
			// Pulled rather than cloned again: files that did not change
			// stay as they are, and so does the skills' digest.
			if _, err := s.git(ctx, src.url, ext, "-C", ext, "pull", "--ff-only"); err != nil {
				slog.Info("skills: plugin pull failed, cloning it again", "marketplace", m.Name, "plugin", name, "err", err)
				reuse = false
			} else {
				head = s.head(ctx, ext)
			}
		}
		if !reuse {
			var flags []string
			switch {
			case src.sha != "":
				flags = []string{"--filter=blob:none", "--no-checkout"}
			case src.subdir != "":
				flags = []string{"--filter=tree:0", "--sparse", "--depth", "1"}
			default:
				flags = []string{"--depth", "1"}
			}
			if src.ref != "" && src.sha == "" {
				flags = append(flags, "--branch", src.ref)
			}
			if err := s.clone(ctx, src.url, ext, flags...); err != nil {
				return mpPlugin{}, err
			}
			if src.sha != "" {
				if _, err := s.git(ctx, src.url, ext, "-C", ext, "checkout", "--quiet", src.sha); err != nil {
					return mpPlugin{}, err
				}
			} else if src.subdir != "" {
				if _, err := s.git(ctx, src.url, ext, "-C", ext, "sparse-checkout", "set", "--", src.subdir); err != nil {
					return mpPlugin{}, err
				}
			}
			head = s.head(ctx, ext)
		}
		p.dir, p.version, p.confine = ext, head, ext
		if src.subdir != "" {
			p.dir = filepath.Join(ext, filepath.FromSlash(src.subdir))
		}
	}
	if fi, err := os.Stat(p.dir); err != nil || !fi.IsDir() {
		return mpPlugin{}, fmt.Errorf("plugin folder %s not found", p.dir)
	}
	if !within(p.dir, p.confine) {
		return mpPlugin{}, fmt.Errorf("plugin folder %s leads outside its repository", p.dir)
	}
	// plugin.json is read best effort, as the references do.
	var meta map[string]any
	_ = readJSONIn(p.dir, ".tfrobot-plugin/plugin.json", &meta)
	// The version: the entry's, else plugin.json's, else the commit.
	for _, v := range []any{e["version"], meta["version"]} {
		if v, ok := v.(string); ok && strings.TrimSpace(v) != "" {
			p.version = strings.TrimSpace(v)
			break
		}
	}
	// Strict mode (the default): plugin.json may declare components and
	// its "skills" paths add to the entry's; not strict, the entry is the
	// whole definition and a plugin.json declaring one is a conflict.
	strict, ok := e["strict"].(bool)
	if !ok {
		strict = true
	}
	if !strict {
		for _, f := range []string{"commands", "agents", "hooks", "skills", "mcpServers", "lspServers"} {
			if truthy(meta[f]) {
				return mpPlugin{}, fmt.Errorf("conflicting manifests: strict is false but plugin.json declares %s", f)
			}
		}
	}
	// The skill folders: skills/, then the "skills" paths (a string or a
	// list), each inside the plugin's folder, once each.
	paths := pathList(e["skills"])
	if strict {
		paths = append(paths, pathList(meta["skills"])...)
	}
	seen := map[string]bool{}
	for _, rel := range append([]string{"skills"}, paths...) {
		d := filepath.Join(p.dir, filepath.FromSlash(rel))
		real, err := filepath.EvalSymlinks(d)
		if err != nil || seen[real] || !isDir(d) {
			continue
		}
		if !within(d, p.dir) {
			slog.Warn("skills: a plugin's skills path leads outside it", "marketplace", m.Name, "plugin", name, "path", rel)
			continue
		}
		seen[real] = true
		p.containers = append(p.containers, d)
	}
	return p, nil
}

// pathList reads a string or a list of strings (other items skipped).
func pathList(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, i := range x {
			if s, ok := i.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// truthy is Python's truth of a JSON value.
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case float64:
		return x != 0
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	return true
}

// within reports whether p, its symlinks followed, is root or below it.
func within(p, root string) bool {
	rp, err := filepath.EvalSymlinks(p)
	if err != nil {
		return false
	}
	rr, err := filepath.EvalSymlinks(root)
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(rr, rp)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
