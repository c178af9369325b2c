package server

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/realclientip/realclientip-go"
)

// clientAddrs tells which client address a request comes from, for the
// connection bounds kept per address (connlimit.go) and the logs
// (spec/decisions.md, Limits against hostile clients: Client addresses).
//
// By default the client is the TCP peer. A deployment behind reverse
// proxies names them (WithTrustedProxies): a request whose TCP peer is one
// of them is counted against the address the proxies' header names, and a
// request from anyone else against its TCP peer, whatever headers it sends,
// so that no client can choose the address it is counted against.
type clientAddrs struct {
	proxies []net.IPNet           // the trusted proxies; none: the header is never read
	header  realclientip.Strategy // reads the client address from a trusted proxy's header
}

// newClientAddrs reads the trusted proxies (addresses or CIDR prefixes)
// and the header naming the client: "X-Forwarded-For" or "Forwarded"
// (RFC 7239) give the rightmost address that is not a trusted proxy, any
// other header one address (X-Real-IP, for example).
func newClientAddrs(header string, proxies []string) (clientAddrs, error) {
	if len(proxies) == 0 {
		return clientAddrs{}, errors.New("no proxy given")
	}
	nets, err := realclientip.AddressesAndRangesToIPNets(proxies...)
	if err != nil {
		return clientAddrs{}, err
	}
	var strat realclientip.Strategy
	switch http.CanonicalHeaderKey(strings.TrimSpace(header)) {
	case "":
		return clientAddrs{}, errors.New("no header given")
	case "X-Forwarded-For", "Forwarded":
		strat, err = realclientip.NewRightmostTrustedRangeStrategy(header, nets)
	default:
		strat, err = realclientip.NewSingleIPHeaderStrategy(header)
	}
	if err != nil {
		return clientAddrs{}, err
	}
	return clientAddrs{proxies: nets, header: strat}, nil
}

// of returns the client address of a request from remoteAddr (host:port)
// with header h: the address a trusted proxy's header names, else the TCP
// peer's (a trusted proxy that names none, or an invalid one, is its own
// client). Without a port or an address (a Unix socket), remoteAddr itself.
func (a clientAddrs) of(h http.Header, remoteAddr string) string {
	peer := realclientip.RemoteAddrStrategy{}.ClientIP(nil, remoteAddr)
	if peer == "" {
		return remoteAddr
	}
	if len(a.proxies) == 0 || h == nil {
		return peer
	}
	ip, err := realclientip.ParseIPAddr(peer)
	if err != nil || !contains(a.proxies, ip.IP) {
		return peer
	}
	if client := a.header.ClientIP(h, remoteAddr); client != "" {
		return client
	}
	return peer
}

func contains(nets []net.IPNet, ip net.IP) bool {
	for _, n := range nets {
		if n.Contains(ip) {
			return true
		}
	}
	return false
}

// addrKey is what the per-address bounds count a client address under: an
// IPv4 address, or the /64 prefix of an IPv6 one (one subscriber's network:
// a client holding a /64 has 2^64 addresses to choose from). Anything that
// is not an address (a Unix socket's peer) is its own key.
func addrKey(addr string) string {
	host, _, _ := strings.Cut(addr, "%") // a zone does not make another client
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return addr
	}
	ip = ip.Unmap()
	if ip.Is4() {
		return ip.String()
	}
	p, err := ip.Prefix(64)
	if err != nil {
		return addr
	}
	return p.String()
}

// WithTrustedProxies names the reverse proxies or load balancers in front
// of the Server (addresses or CIDR prefixes, such as "10.0.0.0/8" or
// "127.0.0.1") and the request header in which they name the client:
// "X-Forwarded-For" or "Forwarded" (the rightmost address in it that is not
// one of the proxies is the client), or a header carrying one address,
// such as "X-Real-IP". A handshake whose TCP peer is one of the proxies is
// then counted, by the per-address bounds (WithMaxPendingPerAddress,
// WithMaxConnectionsPerIP), against the client its header names, and logged
// with it; the AuthProvider sees it as AuthRequest.ClientAddr. The header
// of anyone else is never read. Without this option (the default) every
// client is its TCP peer, and behind a proxy every client shares the
// proxy's address (spec/decisions.md, Limits against hostile clients).
func WithTrustedProxies(header string, proxies ...string) Option {
	return func(c *config) error {
		a, err := newClientAddrs(header, proxies)
		if err != nil {
			return fmt.Errorf("WithTrustedProxies: %w", err)
		}
		c.clientAddrs = a
		return nil
	}
}
