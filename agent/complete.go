package agent

import (
	"context"
	"net/url"
	"slices"
	"strings"

	"github.com/a2c-smcp/smcp-go/protocol"
)

// ResourceRef is the reference to complete an argument of a resource
// template (or resource) by its URI.
func ResourceRef(uri string) protocol.CompleteRef {
	return protocol.CompleteRef{Type: protocol.CompleteRefTypeRefResource, URI: &uri}
}

// PromptRef is the reference to complete an argument of a prompt by its
// name.
func PromptRef(name string) protocol.CompleteRef {
	return protocol.CompleteRef{Type: protocol.CompleteRefTypeRefPrompt, Name: &name}
}

// CompleteOption configures one Complete.
type CompleteOption func(*protocol.CompleteReq)

// WithChosen passes the arguments already chosen (MCP CompleteContext):
// doc_ref while completing page_index, for example.
func WithChosen(args map[string]string) CompleteOption {
	return func(r *protocol.CompleteReq) {
		if len(args) > 0 {
			r.Context = &protocol.CompleteReqContext{Arguments: args}
		}
	}
}

// WithServer names the Computer's MCP server to ask (its configured name),
// instead of letting the Computer find the owner of the reference.
func WithServer(name string) CompleteOption {
	return func(r *protocol.CompleteReq) { r.Server = name }
}

// Complete asks computer to complete one argument of a resource template or
// prompt of one of its MCP servers (client:complete, an smcp-go extension:
// https://github.com/a2c-smcp/smcp-go/blob/main/spec/finder.md#completion);
// the Computer forwards MCP completion/complete to the server that owns ref.
// A Computer without the extension (a reference SDK's) is 4106, as is an
// MCP server that does not complete, and a Server that is not smcp-go's
// (at once: it routes no extension); 4201 when no server serves a
// resource's host, 404 when none has the prompt.
func (c *Client) Complete(ctx context.Context, computer string, ref protocol.CompleteRef, arg protocol.CompleteReqArgument, opts ...CompleteOption) (*protocol.CompletionValues, error) {
	if err := c.checkExtension(protocol.EventComplete); err != nil {
		return nil, err
	}
	id := c.nextReqID()
	req := protocol.CompleteReq{Agent: c.cfg.name, ReqID: id, Computer: computer, Ref: ref, Argument: arg}
	for _, o := range opts {
		o(&req)
	}
	ret, err := call[protocol.CompleteRet](ctx, c, protocol.EventComplete, id, req)
	if err != nil {
		return nil, err
	}
	if ret.Completion.Values == nil {
		ret.Completion.Values = []string{}
	}
	return &ret.Completion, nil
}

// DPEQuery is what a partly typed dpe:// URI asks to complete
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/finder.md#completion):
// the template argument the URI ends in, with the arguments before it.
type DPEQuery struct {
	// Host is the URI's host; Hosts is true while the host itself is typed.
	Host  string
	Hosts bool
	// Template is the URI template whose Argument is completed, with Chosen
	// the arguments before it ("" Template: only Fixed candidates).
	Template string
	Argument protocol.CompleteReqArgument
	Chosen   map[string]string
	// Base is the URI up to the value being completed: a candidate is Base
	// followed by the (path-escaped) value.
	Base string
	// Fixed are literal candidates at this point ("pages/", "elements/").
	Fixed []string
}

// ParseDPEPartial splits a partly typed dpe:// URI into what to complete:
// "dpe://HO" the host, "dpe://HOST/" + prefix a doc_ref,
// "dpe://HOST/DOC/pages/" + prefix a page_index,
// "dpe://HOST/DOC/elements/" + prefix an element_id, and
// "dpe://HOST/DOC/" + prefix the literal "pages/" or "elements/". ok is false
// for anything else (another scheme, a query, a deeper path).
func ParseDPEPartial(partial string) (q DPEQuery, ok bool) {
	const scheme = "dpe://"
	if len(partial) < len(scheme) {
		if strings.HasPrefix(scheme, strings.ToLower(partial)) {
			return DPEQuery{Hosts: true, Base: scheme}, true
		}
		return DPEQuery{}, false
	}
	if !strings.EqualFold(partial[:len(scheme)], scheme) || strings.ContainsAny(partial, "?#") {
		return DPEQuery{}, false
	}
	rest := partial[len(scheme):]
	host, path, hasPath := strings.Cut(rest, "/")
	if !hasPath {
		return DPEQuery{Host: host, Hosts: true, Base: scheme}, true
	}
	root := scheme + host + "/"
	q = DPEQuery{Host: host, Base: root}
	parts := strings.Split(path, "/")
	unescape := func(s string) string {
		if v, err := url.PathUnescape(s); err == nil {
			return v
		}
		return s
	}
	switch len(parts) {
	case 1:
		q.Template = root + "{doc_ref}/pages/{page_index}" // the template the spec has servers declare
		q.Argument = protocol.CompleteReqArgument{Name: "doc_ref", Value: unescape(parts[0])}
		return q, true
	case 2:
		q.Base = root + parts[0] + "/"
		for _, f := range []string{"pages/", "elements/"} {
			if strings.HasPrefix(f, parts[1]) {
				q.Fixed = append(q.Fixed, f)
			}
		}
		return q, true
	case 3:
		doc := unescape(parts[0])
		q.Base = root + parts[0] + "/" + parts[1] + "/"
		q.Chosen = map[string]string{"doc_ref": doc}
		switch parts[1] {
		case "pages":
			q.Template = root + "{doc_ref}/pages/{page_index}"
			q.Argument = protocol.CompleteReqArgument{Name: "page_index", Value: unescape(parts[2])}
		case "elements":
			q.Template = root + "{doc_ref}/elements/{element_id}"
			q.Argument = protocol.CompleteReqArgument{Name: "element_id", Value: unescape(parts[2])}
		default:
			return DPEQuery{}, false
		}
		return q, true
	}
	return DPEQuery{}, false
}

// maxHostScan bounds the catalog entries CompleteDPE reads for hosts.
const maxHostScan = 2000

// CompleteDPE completes a partly typed dpe:// URI on computer (see
// ParseDPEPartial) into whole URIs, sorted: hosts from the Computer's
// Finder catalog, doc_ref, page_index and element_id through Complete.
// hasMore reports that the MCP server had more values than it sent.
func (c *Client) CompleteDPE(ctx context.Context, computer, partial string) (uris []string, hasMore bool, err error) {
	q, ok := ParseDPEPartial(partial)
	if !ok {
		return []string{}, false, nil
	}
	switch {
	case q.Hosts:
		seen := map[string]bool{}
		n := 0
		for doc, err := range c.Documents(ctx, computer, FinderQuery{}) {
			if err != nil {
				return nil, false, err
			}
			if n++; n > maxHostScan {
				hasMore = true
				break
			}
			h := strings.TrimPrefix(doc.URI, "dpe://")
			h, _, _ = strings.Cut(h, "/")
			if h != "" && strings.HasPrefix(strings.ToLower(h), strings.ToLower(q.Host)) && !seen[h] {
				seen[h] = true
				uris = append(uris, "dpe://"+h+"/")
			}
		}
	case q.Template == "":
		for _, f := range q.Fixed {
			uris = append(uris, q.Base+f)
		}
	default:
		res, err := c.Complete(ctx, computer, ResourceRef(q.Template), q.Argument, WithChosen(q.Chosen))
		if err != nil {
			return nil, false, err
		}
		for _, v := range res.Values {
			uris = append(uris, q.Base+url.PathEscape(v))
		}
		hasMore = res.HasMore != nil && *res.HasMore
	}
	slices.Sort(uris)
	if uris == nil {
		uris = []string{}
	}
	return uris, hasMore, nil
}
