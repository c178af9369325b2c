package computer

import (
	"errors"
	"strconv"
	"time"

	"github.com/a2c-smcp/smcp-go/computer/mcpclient"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/prometheus/client_golang/prometheus"
)

// WithMetrics registers the Computer's Prometheus metrics on reg: MCP
// servers by state, their restarts, tool calls by outcome, Finder
// documents, cache refreshes and resource read latency. Each Computer
// needs its own Registerer (a collision makes Start fail); without
// WithMetrics nothing is recorded. The library never touches
// prometheus.DefaultRegisterer.
func WithMetrics(reg prometheus.Registerer) Option { return func(o *options) { o.metrics = reg } }

// metrics holds the Computer's counters; a nil *metrics records nothing,
// so each hook is one unconditional call.
type metrics struct {
	toolCalls *prometheus.CounterVec
	refreshes *prometheus.CounterVec
	reads     *prometheus.HistogramVec
}

const metricsNamespace = "smcp_computer"

func newMetrics(reg prometheus.Registerer, c *Computer) (*metrics, error) {
	if reg == nil {
		return nil, nil
	}
	m := &metrics{
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metricsNamespace, Name: "tool_calls_total",
			Help: `Tool calls by outcome: "ok", or "error" for a result with isError set (refusals, timeouts, cancels and tool failures).`,
		}, []string{"outcome"}),
		refreshes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metricsNamespace, Name: "cache_refreshes_total",
			Help: "Changes of an aggregated cache announced to the Server, by server:update_* event.",
		}, []string{"event"}),
		reads: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: metricsNamespace, Name: "resource_read_duration_seconds",
			Help:    "client:read_resource latency by outcome (ok or the error code).",
			Buckets: prometheus.DefBuckets,
		}, []string{"outcome"}),
	}
	var errs []error
	for _, col := range []prometheus.Collector{m.toolCalls, m.refreshes, m.reads, &gauges{c: c}} {
		errs = append(errs, reg.Register(col))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, protocol.NewInternal("WithMetrics: %v", err)
	}
	return m, nil
}

func (m *metrics) toolCall(res protocol.CallToolResult) {
	if m == nil {
		return
	}
	outcome := "ok"
	if res.IsError != nil && *res.IsError {
		outcome = "error"
	}
	m.toolCalls.WithLabelValues(outcome).Inc()
}

func (m *metrics) refreshed(event string) {
	if m == nil {
		return
	}
	m.refreshes.WithLabelValues(event).Inc()
}

func (m *metrics) read(started time.Time, err error) {
	if m == nil {
		return
	}
	outcome := "ok"
	if err != nil {
		outcome = strconv.Itoa(int(protocol.AsError(err).Code))
	}
	m.reads.WithLabelValues(outcome).Observe(time.Since(started).Seconds())
}

// gauges reads the MCP servers' states and the Finder at scrape time.
type gauges struct{ c *Computer }

var (
	serversDesc   = prometheus.NewDesc(metricsNamespace+"_mcp_servers", "Configured MCP servers by state.", []string{"state"}, nil)
	restartsDesc  = prometheus.NewDesc(metricsNamespace+"_mcp_server_restarts_total", "Connections made to an MCP server after its first, by server.", []string{"server"}, nil)
	documentsDesc = prometheus.NewDesc(metricsNamespace+"_finder_documents", "Documents the Finder lists.", nil, nil)
	joinedDesc    = prometheus.NewDesc(metricsNamespace+"_joined", "1 while the Computer is in its office on the Server.", nil, nil)
)

func (g *gauges) Describe(ch chan<- *prometheus.Desc) {
	ch <- serversDesc
	ch <- restartsDesc
	ch <- documentsDesc
	ch <- joinedDesc
}

func (g *gauges) Collect(ch chan<- prometheus.Metric) {
	byState := map[mcpclient.State]int{}
	for _, st := range []mcpclient.State{mcpclient.StateStarting, mcpclient.StateUp, mcpclient.StateDown, mcpclient.StateStopped, mcpclient.StateDisabled} {
		byState[st] = 0
	}
	for _, st := range g.c.Status() {
		byState[st.State]++
		ch <- prometheus.MustNewConstMetric(restartsDesc, prometheus.CounterValue, float64(st.Restarts), st.Name)
	}
	for st, n := range byState {
		ch <- prometheus.MustNewConstMetric(serversDesc, prometheus.GaugeValue, float64(n), string(st))
	}
	ch <- prometheus.MustNewConstMetric(documentsDesc, prometheus.GaugeValue, float64(len(g.c.Documents())))
	joined := 0.0
	if cl := g.c.Client(); cl != nil && cl.Joined() {
		joined = 1
	}
	ch <- prometheus.MustNewConstMetric(joinedDesc, prometheus.GaugeValue, joined)
}
