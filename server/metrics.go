package server

import (
	"errors"
	"strconv"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/prometheus/client_golang/prometheus"
)

// WithMetrics registers the Server's Prometheus metrics on reg (README.md,
// Operations): connections by role, offices, routed requests by event and
// code, their latency, requests in flight, timeouts, authentication
// refusals and, in cluster mode, the live nodes. Each Server needs its own
// Registerer (two Servers on one registry collide and New fails); without
// WithMetrics nothing is recorded. The library never touches
// prometheus.DefaultRegisterer.
func WithMetrics(reg prometheus.Registerer) Option {
	return func(c *config) error {
		if reg == nil {
			return errors.New("WithMetrics: nil registerer")
		}
		c.metrics = reg
		return nil
	}
}

// metrics holds the Server's counters. A nil *metrics records nothing, so
// the hooks in the handlers are one unconditional call each.
type metrics struct {
	routed    *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	timeouts  *prometheus.CounterVec
	authFails *prometheus.CounterVec
	refused   *prometheus.CounterVec
}

const metricsNamespace = "smcp_server"

// newMetrics registers the counters and a collector for the gauges that are
// read from the Server's tables when scraped.
func newMetrics(reg prometheus.Registerer, s *Server) (*metrics, error) {
	m := &metrics{
		routed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metricsNamespace, Name: "routed_requests_total",
			Help: `Routed client:* requests by event and outcome code ("ok" for a Computer's answer, else the protocol error code).`,
		}, []string{"event", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: metricsNamespace, Name: "routed_request_duration_seconds",
			Help:    "Time from admitting a routed request to answering the Agent, by event.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"event"}),
		timeouts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metricsNamespace, Name: "routed_request_timeouts_total",
			Help: "Routed requests answered 408 because the Computer did not answer in time, by event.",
		}, []string{"event"}),
		authFails: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metricsNamespace, Name: "auth_refusals_total",
			Help: "Refused /smcp connects, by code.",
		}, []string{"code"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metricsNamespace, Name: "connection_refusals_total",
			Help: "Connections refused at their handshake because the node, the client address, the connections awaiting admission or the client address's share of them are at their maximum, or requests refused because their headers are too large, by reason.",
		}, []string{"reason"}),
	}
	for _, c := range []prometheus.Collector{m.routed, m.latency, m.timeouts, m.authFails, m.refused, &gauges{s: s}} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// routedOutcome counts one routed request's outcome: its code when value
// is a refusal or error, "ok" for a Computer's answer. started is zero for
// a request refused before it was admitted.
func (m *metrics) routedOutcome(event string, value any, started time.Time) {
	if m == nil {
		return
	}
	code := "ok"
	if e, ok := value.(*protocol.Error); ok {
		code = strconv.Itoa(int(e.Code))
	}
	m.routed.WithLabelValues(event, code).Inc()
	if !started.IsZero() {
		m.latency.WithLabelValues(event).Observe(time.Since(started).Seconds())
	}
}

func (m *metrics) timeout(event string) {
	if m == nil {
		return
	}
	m.timeouts.WithLabelValues(event).Inc()
}

func (m *metrics) connRefused(reason string) {
	if m == nil {
		return
	}
	m.refused.WithLabelValues(reason).Inc()
}

func (m *metrics) authRefused(code protocol.Code) {
	if m == nil {
		return
	}
	m.authFails.WithLabelValues(strconv.Itoa(int(code))).Inc()
}

// gauges reads the Server's tables under its lock at scrape time, so that
// no gauge can drift from the state it describes.
type gauges struct{ s *Server }

var (
	connectionsDesc = prometheus.NewDesc(metricsNamespace+"_connections", `Sessions admitted to /smcp on this node, by role ("none" before the first join).`, []string{"role"}, nil)
	officesDesc     = prometheus.NewDesc(metricsNamespace+"_offices", "Offices with at least one member on this node.", nil, nil)
	inFlightDesc    = prometheus.NewDesc(metricsNamespace+"_routed_requests_in_flight", "Routed requests admitted on this node and not answered yet.", nil, nil)
	peersDesc       = prometheus.NewDesc(metricsNamespace+"_cluster_peers", "Live nodes of the cluster seen in Redis, this one included (0 on a single node).", nil, nil)
	pendingDesc     = prometheus.NewDesc(metricsNamespace+"_pending_connections", "Connections held whose /smcp CONNECT is not admitted yet (bounded by smcp_server_max_pending_connections).", nil, nil)
	maxPendingDesc  = prometheus.NewDesc(metricsNamespace+"_max_pending_connections", "The bound on connections awaiting admission (--max-pending-connections); over it a handshake is refused 503.", nil, nil)
	pendingAddrDesc = prometheus.NewDesc(metricsNamespace+"_max_pending_per_address", "The share of it one client address may hold (--max-pending-per-address, 0: none); over it a handshake is refused 429.", nil, nil)
)

func (g *gauges) Describe(ch chan<- *prometheus.Desc) {
	ch <- connectionsDesc
	ch <- officesDesc
	ch <- inFlightDesc
	ch <- peersDesc
	ch <- pendingDesc
	ch <- maxPendingDesc
	ch <- pendingAddrDesc
}

func (g *gauges) Collect(ch chan<- prometheus.Metric) {
	s := g.s
	byRole := map[string]int{"none": 0, string(protocol.RoleAgent): 0, string(protocol.RoleComputer): 0}
	s.mu.Lock()
	for _, sess := range s.sessions {
		role := string(sess.role)
		if role == "" {
			role = "none"
		}
		byRole[role]++
	}
	offices, inFlight := len(s.offices), len(s.calls)
	s.mu.Unlock()
	for role, n := range byRole {
		ch <- prometheus.MustNewConstMetric(connectionsDesc, prometheus.GaugeValue, float64(n), role)
	}
	ch <- prometheus.MustNewConstMetric(officesDesc, prometheus.GaugeValue, float64(offices))
	ch <- prometheus.MustNewConstMetric(inFlightDesc, prometheus.GaugeValue, float64(inFlight))
	ch <- prometheus.MustNewConstMetric(peersDesc, prometheus.GaugeValue, float64(s.clusterPeers()))
	ch <- prometheus.MustNewConstMetric(pendingDesc, prometheus.GaugeValue, float64(s.limits.pendingNow()))
	ch <- prometheus.MustNewConstMetric(maxPendingDesc, prometheus.GaugeValue, float64(s.cfg.maxPending))
	ch <- prometheus.MustNewConstMetric(pendingAddrDesc, prometheus.GaugeValue, float64(s.cfg.maxPendingAddr))
}
