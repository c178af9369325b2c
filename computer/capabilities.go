package computer

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/a2c-smcp/smcp-go/computer/blob"
	"github.com/a2c-smcp/smcp-go/computer/mcpclient"
	"github.com/a2c-smcp/smcp-go/computer/resources"
	"github.com/a2c-smcp/smcp-go/computer/skills"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// The events 0.4.0 added, the capabilities
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/capabilities.md): a
// Computer answers each with a result or a coded refusal, never silence,
// in the codes the 0.4 references answer the same situation with, so that
// a reference Agent reads them as errors (it treats a flat ack as one only
// for 404, 4006–4008 and 4014–4019):
//
//   - client:get_resources: one page of the MCP server's resources/list
//     (package resources); 4014 when no connected MCP server has the
//     bundle_id (as the references answer for a server that is down too),
//     4015 when it declares no resources;
//   - client:get_skills, client:get_skill: the skills of WithSkillHome,
//     WithSkillPlugin, WithSkillMarketplaces and the MCP servers' skill://
//     resources (package skills);
//   - client:get_blob: the chunks of the blobs minted from the tool results
//     of 0.3/0.4 sessions and of large skill files (package blob, the
//     spool of WithSpoolDir);
//   - client:put_blob: uploads into WithLandingRoot; without one, 4019
//     "forbidden" as a reference Computer without a landing root answers
//     (0.4.0 only: a 0.3 session has no such event and is answered 4106
//     before it gets here).

// capOptions are the capabilities' settings.
type capOptions struct {
	spoolDir, landing, skillHome string
	skillCache                   string
	markets                      []skills.Marketplace
	plugins                      [][2]string
	inline                       int64
	rescan                       time.Duration
	blobOpts                     []blob.SpoolOption
	landingOpts                  []blob.LandingOption
}

// WithSpoolDir sets the directory of the blob spool, which the Computer
// owns: emptied at Launch, removed at Close; a non-empty directory that is
// not a spool's, or that another live Computer's spool holds, is refused at
// Launch. Default: a new directory of this process under blob.DefaultBase
// ($TMPDIR/smcp-spool-<uid>), where Launch also removes what Computers that
// are gone (killed included) left.
func WithSpoolDir(dir string) Option { return func(o *options) { o.caps.spoolDir = dir } }

// WithInlineBudget sets the largest binary content item of a tool result
// and the largest skill text that travel inline (default 32 KiB, as the
// references); larger ones go through the spool (client:get_blob).
func WithInlineBudget(n int64) Option { return func(o *options) { o.caps.inline = n } }

// WithSpoolOptions passes options to the blob spool (bounds, lifetime).
func WithSpoolOptions(opts ...blob.SpoolOption) Option {
	return func(o *options) { o.caps.blobOpts = append(o.caps.blobOpts, opts...) }
}

// WithLandingRoot sets the directory client:put_blob uploads land in, which
// must exist; without it every upload is refused (4019 forbidden).
func WithLandingRoot(dir string, opts ...blob.LandingOption) Option {
	return func(o *options) { o.caps.landing, o.caps.landingOpts = dir, opts }
}

// WithSkillHome sets a skill home, whose user/<skill>/SKILL.md folders are
// the skills <skill>.
func WithSkillHome(dir string) Option { return func(o *options) { o.caps.skillHome = dir } }

// WithSkillPlugin adds a plugin directory, whose skills/<skill>/SKILL.md
// folders are the skills <plugin>:<skill>.
func WithSkillPlugin(name, dir string) Option {
	return func(o *options) { o.caps.plugins = append(o.caps.plugins, [2]string{name, dir}) }
}

// WithSkillCacheDir sets the directory the skills fetched are kept in:
// the clones of the WithSkillMarketplaces repositories and the expanded
// archive skills of the MCP servers (skills.WithCacheDir); kept across
// runs, so that a marketplace is not cloned again. Default: a new
// directory under os.TempDir, removed at Close.
func WithSkillCacheDir(dir string) Option { return func(o *options) { o.caps.skillCache = dir } }

// WithSkillMarketplaces adds git marketplaces of plugins, whose skills are
// <plugin>:<skill> (skills.Marketplace; skills.ReadSettings reads them
// from a reference settings.json). They are cloned after Launch, without
// holding it up; server:update_skills follows when their skills come.
func WithSkillMarketplaces(ms ...skills.Marketplace) Option {
	return func(o *options) { o.caps.markets = append(o.caps.markets, ms...) }
}

// WithSkillRescan sets how often the skills are looked at for a change,
// which sends server:update_skills (default 5 s; negative: never). Each
// look lists the skill folders and the MCP servers' resources.
func WithSkillRescan(d time.Duration) Option { return func(o *options) { o.caps.rescan = d } }

// caps are a running Computer's capabilities, opened by Launch.
type caps struct {
	spool   *blob.Spool
	landing *blob.Landing
	skills  *skills.Set
	cache   string // the skills' cache directory when the Computer made it
	stop    context.CancelFunc
	done    chan struct{}
	refresh chan struct{} // asks the skills goroutine for skills.Set.RefreshMCP
}

// openCaps opens the spool, the landing root and the skills.
func (c *Computer) openCaps() (*caps, error) {
	o := c.o.caps
	sopts := o.blobOpts
	if o.inline > 0 {
		sopts = append([]blob.SpoolOption{blob.WithInlineBudget(o.inline)}, sopts...)
	}
	sp, err := blob.OpenSpool(o.spoolDir, sopts...)
	if err != nil {
		return nil, protocol.NewBadRequest("blob spool: %v", err).Wrap(err)
	}
	k := &caps{spool: sp}
	if o.landing != "" {
		if k.landing, err = blob.OpenLanding(o.landing, o.landingOpts...); err != nil {
			sp.Close()
			return nil, protocol.NewBadRequest("landing root: %v", err).Wrap(err)
		}
	}
	{
		kopts := []skills.Option{skills.WithSpool(sp), skills.WithOnChange(c.notifySkills),
			skills.WithMCPServers(c.skillServers)}
		if o.skillHome != "" {
			kopts = append(kopts, skills.WithHome(o.skillHome))
		}
		for _, p := range o.plugins {
			kopts = append(kopts, skills.WithPlugin(p[0], p[1]))
		}
		if o.inline > 0 {
			kopts = append(kopts, skills.WithInlineBudget(o.inline))
		}
		cache := o.skillCache
		if cache == "" {
			if cache, err = os.MkdirTemp("", "smcp-skills-"); err != nil {
				k.landing.Close()
				sp.Close()
				return nil, protocol.NewBadRequest("skill cache: %v", err).Wrap(err)
			}
			k.cache = cache
		}
		for _, m := range o.markets {
			kopts = append(kopts, skills.WithMarketplace(m))
		}
		kopts = append(kopts, skills.WithCacheDir(cache))
		k.skills = skills.New(kopts...)
		every := o.rescan
		if every == 0 {
			every = 5 * time.Second
		}
		ctx, cancel := context.WithCancel(context.Background())
		k.stop, k.done, k.refresh = cancel, make(chan struct{}), make(chan struct{}, 1)
		markets := len(o.markets) > 0
		go func() {
			defer close(k.done)
			if markets {
				k.skills.RefreshMarketplaces(ctx)
			}
			var tick <-chan time.Time
			if every > 0 {
				t := time.NewTicker(every)
				defer t.Stop()
				tick = t.C
			}
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick:
					k.skills.Rescan(ctx)
				case <-k.refresh:
					k.skills.RefreshMCP(ctx)
				}
			}
		}()
	}
	return k, nil
}

// notifySkills sends server:update_skills, in a session whose generation
// has it (0.3, 0.4): a 0.2.0 Server knows no such event.
func (c *Computer) notifySkills() {
	c.mu.Lock()
	cl := c.client
	c.mu.Unlock()
	if cl == nil {
		return
	}
	if _, ok := cl.Generation().Lookup(protocol.EventUpdateSkills); ok {
		c.notify(protocol.EventUpdateSkills)
	}
}

// refreshSkills asks for the MCP servers' skills to be listed again (a
// server came up, went down or changed its resources), without waiting;
// requests made meanwhile are one.
func (c *Computer) refreshSkills() {
	if k, _ := c.capsNow(); k != nil && k.refresh != nil {
		select {
		case k.refresh <- struct{}{}:
		default:
		}
	}
}

// skillServer is an MCP server connection with its bundle_id, a source
// of skills (skill:// resources).
type skillServer struct {
	*mcpclient.Conn
	id string
}

func (s skillServer) BundleID() string { return s.id }

// skillServers are the connected MCP servers that declare resources.
func (c *Computer) skillServers() []skills.MCPServer {
	m := c.Manager()
	if m == nil {
		return nil
	}
	var out []skills.MCPServer
	for _, conn := range m.Conns() {
		if conn.Capabilities().Resources != nil {
			out = append(out, skillServer{conn, c.bundleOf(conn.Name())})
		}
	}
	return out
}

// close stops the capabilities: the skills' rescans, the uploads in flight
// and the spool, whose directory goes.
func (k *caps) close() error {
	if k == nil {
		return nil
	}
	if k.stop != nil {
		k.stop()
		<-k.done
	}
	err := errors.Join(k.landing.Close(), k.spool.Close())
	if k.cache != "" {
		err = errors.Join(err, os.RemoveAll(k.cache))
	}
	return err
}

// capsNow returns the capabilities and the office the Computer is in ("" when
// it has joined none: CallTool used directly).
func (c *Computer) capsNow() (*caps, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	office := ""
	if c.client != nil {
		office = c.client.Office()
	}
	return c.caps, office
}

// mint moves a 0.3/0.4 tool result's large binary items to the spool (those
// the MCP connection staged there as they arrived are claimed for the
// office). A 0.2.0 session has no client:get_blob: its items are put back
// inline, up to the payload limit.
func (c *Computer) mint(g protocol.Generation, res *protocol.CallToolResult) {
	k, office := c.capsNow()
	switch {
	case k == nil:
	case !g.Handshake():
		k.spool.Inline(res)
	default:
		k.spool.Mint(office, res)
	}
}

// Spool returns the blob spool, nil before Launch.
func (c *Computer) Spool() *blob.Spool {
	k, _ := c.capsNow()
	if k == nil {
		return nil
	}
	return k.spool
}

// Skills returns the skills, nil when none are configured or before Launch.
func (c *Computer) Skills() *skills.Set {
	k, _ := c.capsNow()
	if k == nil {
		return nil
	}
	return k.skills
}

func (h handler) GetResources(ctx context.Context, _ protocol.Generation, req protocol.GetResourcesReq) (protocol.GetResourcesRet, error) {
	c := h.c
	lookup := func(id string) (resources.Server, bool) {
		name, ok := c.serverOf(id)
		if !ok {
			return nil, false
		}
		m := c.Manager()
		if m == nil {
			return nil, false
		}
		if conn := m.Conn(name); conn != nil {
			return conn, true
		}
		return nil, false
	}
	ret, err := resources.Get(ctx, lookup, req)
	if err != nil {
		return ret, protocol.AsError(err)
	}
	return ret, nil
}

func (h handler) GetSkills(ctx context.Context, _ protocol.Generation, req protocol.GetSkillsReq) (protocol.GetSkillsRet, error) {
	ret := protocol.GetSkillsRet{ReqID: req.ReqID, Skills: []protocol.A2CSkillRef{}}
	if k, _ := h.c.capsNow(); k != nil && k.skills != nil {
		ret.Skills = k.skills.List(ctx)
	}
	return ret, nil
}

func (h handler) GetSkill(ctx context.Context, _ protocol.Generation, req protocol.GetSkillReq) (protocol.GetSkillRet, error) {
	k, office := h.c.capsNow()
	if k == nil || k.skills == nil {
		if !skills.ValidName(req.Name) {
			return protocol.GetSkillRet{}, protocol.NewSkillNameInvalid("Invalid skill name").With("name", req.Name)
		}
		return protocol.GetSkillRet{}, protocol.NewMCPServerNotFound("Skill not found").With("name", req.Name)
	}
	return k.skills.Get(ctx, office, req)
}

func (h handler) GetBlob(_ context.Context, _ protocol.Generation, req protocol.GetBlobReq) (protocol.GetBlobRet, error) {
	k, office := h.c.capsNow()
	if k == nil {
		return protocol.GetBlobRet{}, protocol.NewBlobNotAccessible("Blob not accessible").With("reason", "gone")
	}
	return k.spool.Read(office, req)
}

func (h handler) PutBlob(_ context.Context, _ protocol.Generation, req protocol.PutBlobReq) (protocol.PutBlobRet, error) {
	k, office := h.c.capsNow()
	var l *blob.Landing
	if k != nil {
		l = k.landing
	}
	return l.Put(office, req)
}
