package megamcp

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metrics are the Prometheus metrics of a Server (all prefixed weft_):
//
//	weft_sessions                      gauge    live sessions
//	weft_sessions_created_total        counter  sessions created
//	weft_session_create_seconds        histogram create latency, seconds
//	weft_tool_calls_total{result}      counter  tool calls by result: ok, tool_error, invalid_arguments, unknown_tool, trap, deadline, ...
//	weft_tool_call_seconds             histogram call latency (validation, module, commit, ledger), seconds
//	weft_errors_total{kind}            counter  failed calls and requests by error kind
//	weft_fenced_total                  counter  requests refused for a stale generation
//	weft_checkpoints_total             counter  checkpoints written
//	weft_checkpoint_seconds            histogram time to compute and write one checkpoint, seconds
//	weft_checkpoint_lag_records        gauge    ledger records not yet covered by a checkpoint, all sessions
//	weft_module_idle_instances{module} gauge    pooled idle Wasm instances per module
//	weft_recovery_sessions_total{outcome} counter sessions met by recovery at Open: recovered, set_aside (damaged), kept_transient, kept_configuration (Open refused), removed_incomplete
//	weft_ledger_tail_cut_records_total counter  torn ledger tails cut at recovery (frames; never acknowledged)
//	weft_ledger_tail_cut_bytes_total   counter  bytes of those tails
//	weft_checkpoints_refused_total     counter  checkpoints refused at recovery (damaged, or impossible for their ledger): whole ledger replayed
//	weft_connections                   gauge    open HTTP connections (ConnLimiter)
//	weft_connections_refused_total{reason} counter connections refused (at_capacity) or evicted (idle)
//
// plus the Go runtime and process collectors.
type Metrics struct {
	Registry *prometheus.Registry

	sessions          prometheus.Gauge
	sessionsCreated   prometheus.Counter
	createSeconds     prometheus.Histogram
	calls             *prometheus.CounterVec
	callSeconds       prometheus.Histogram
	errors            *prometheus.CounterVec
	fenced            prometheus.Counter
	checkpoints       prometheus.Counter
	checkpointSeconds prometheus.Histogram
	checkpointLag     prometheus.Gauge
	replayMismatches  prometheus.Counter

	recovered          *prometheus.CounterVec
	tailCutRecords     prometheus.Counter
	tailCutBytes       prometheus.Counter
	checkpointsRefused prometheus.Counter
	connections        prometheus.Gauge
	connsRefused       *prometheus.CounterVec
}

// NewMetrics returns the metrics on a fresh registry (serve it with
// promhttp.HandlerFor(m.Registry, ...)).
func NewMetrics() *Metrics {
	r := prometheus.NewRegistry()
	buckets := prometheus.ExponentialBuckets(0.00005, 2, 18) // 50 us .. 6.5 s
	m := &Metrics{
		Registry:           r,
		sessions:           prometheus.NewGauge(prometheus.GaugeOpts{Name: "weft_sessions", Help: "Live sessions."}),
		sessionsCreated:    prometheus.NewCounter(prometheus.CounterOpts{Name: "weft_sessions_created_total", Help: "Sessions created."}),
		createSeconds:      prometheus.NewHistogram(prometheus.HistogramOpts{Name: "weft_session_create_seconds", Help: "Session create latency in seconds.", Buckets: buckets}),
		calls:              prometheus.NewCounterVec(prometheus.CounterOpts{Name: "weft_tool_calls_total", Help: "Tool calls by result."}, []string{"result"}),
		callSeconds:        prometheus.NewHistogram(prometheus.HistogramOpts{Name: "weft_tool_call_seconds", Help: "Tool call latency in seconds, ledger append included.", Buckets: buckets}),
		errors:             prometheus.NewCounterVec(prometheus.CounterOpts{Name: "weft_errors_total", Help: "Failed calls and requests by error kind."}, []string{"kind"}),
		fenced:             prometheus.NewCounter(prometheus.CounterOpts{Name: "weft_fenced_total", Help: "Requests refused for a stale generation."}),
		checkpoints:        prometheus.NewCounter(prometheus.CounterOpts{Name: "weft_checkpoints_total", Help: "Session checkpoints written."}),
		checkpointSeconds:  prometheus.NewHistogram(prometheus.HistogramOpts{Name: "weft_checkpoint_seconds", Help: "Time to compute and write one checkpoint, seconds.", Buckets: buckets}),
		checkpointLag:      prometheus.NewGauge(prometheus.GaugeOpts{Name: "weft_checkpoint_lag_records", Help: "Ledger records not yet covered by a checkpoint, over all sessions."}),
		recovered:          prometheus.NewCounterVec(prometheus.CounterOpts{Name: "weft_recovery_sessions_total", Help: "Sessions met by recovery at startup, by outcome."}, []string{"outcome"}),
		tailCutRecords:     prometheus.NewCounter(prometheus.CounterOpts{Name: "weft_ledger_tail_cut_records_total", Help: "Torn ledger tail frames cut at recovery (never acknowledged)."}),
		tailCutBytes:       prometheus.NewCounter(prometheus.CounterOpts{Name: "weft_ledger_tail_cut_bytes_total", Help: "Bytes of torn ledger tails cut at recovery."}),
		checkpointsRefused: prometheus.NewCounter(prometheus.CounterOpts{Name: "weft_checkpoints_refused_total", Help: "Checkpoints refused at recovery (damaged or impossible for their ledger)."}),
		connections:        prometheus.NewGauge(prometheus.GaugeOpts{Name: "weft_connections", Help: "Open HTTP connections."}),
		connsRefused:       prometheus.NewCounterVec(prometheus.CounterOpts{Name: "weft_connections_refused_total", Help: "HTTP connections refused at the cap or evicted while idle."}, []string{"reason"}),
		replayMismatches:   prometheus.NewCounter(prometheus.CounterOpts{Name: "weft_replay_mismatches_total", Help: "Replayed calls (recovery, /replay) whose result differed from the acknowledged one."}),
	}
	r.MustRegister(m.recovered, m.tailCutRecords, m.tailCutBytes, m.checkpointsRefused, m.connections, m.connsRefused)
	r.MustRegister(m.sessions, m.sessionsCreated, m.createSeconds, m.calls, m.callSeconds, m.errors,
		m.fenced, m.checkpoints, m.checkpointSeconds, m.checkpointLag, m.replayMismatches,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// RegisterPools adds the weft_module_idle_instances gauge for the server's
// loaded modules (call once, after Open).
func (m *Metrics) RegisterPools(s *Server) {
	desc := prometheus.NewDesc("weft_module_idle_instances", "Pooled idle Wasm instances per loaded module.", []string{"module", "digest"}, nil)
	m.Registry.MustRegister(poolCollector{s: s, desc: desc})
}

type poolCollector struct {
	s    *Server
	desc *prometheus.Desc
}

func (c poolCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c poolCollector) Collect(ch chan<- prometheus.Metric) {
	c.s.mu.RLock()
	defer c.s.mu.RUnlock()
	for d, lm := range c.s.modules {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(lm.mod.Idle()), lm.mod.Manifest().Name, d)
	}
}
