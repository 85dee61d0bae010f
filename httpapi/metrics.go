package httpapi

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/bankd/bankd/lock"
	"github.com/bankd/bankd/transaction"
)

// Metrics are bankd's Prometheus metrics, on a registry of their own so several instances
// can live in one process (tests, bankload -embedded).
type Metrics struct {
	reg          *prometheus.Registry
	requests     *prometheus.CounterVec
	latency      *prometheus.HistogramVec
	transfers    *prometheus.CounterVec
	leaseWait    prometheus.Histogram
	leaseFailed  *prometheus.CounterVec
	leasesLost   prometheus.Counter
	recoveredTxs prometheus.Counter
}

// NewMetrics registers the metrics.
func NewMetrics() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bankd_http_requests_total", Help: "HTTP requests by route, method and status.",
		}, []string{"route", "method", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "bankd_http_request_duration_seconds", Help: "HTTP request latency by route and method.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"route", "method"}),
		transfers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bankd_transfers_total", Help: "Transfers by kind and outcome (completed, failed reason, error).",
		}, []string{"kind", "outcome"}),
		leaseWait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "bankd_lease_wait_seconds", Help: "Time spent acquiring account leases.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}),
		leaseFailed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bankd_lease_acquire_failures_total", Help: "Lease acquisitions that failed, by reason.",
		}, []string{"reason"}),
		leasesLost: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "bankd_leases_lost_total", Help: "Leases found lost by a fenced write or renewal.",
		}),
		recoveredTxs: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "bankd_transfers_recovered_total", Help: "Transfers finished by the recovery loop.",
		}),
	}
	m.reg.MustRegister(m.requests, m.latency, m.transfers, m.leaseWait, m.leaseFailed, m.leasesLost, m.recoveredTxs,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// Export the failure series at zero from the start, so dashboards and alerts see them.
	m.leaseFailed.WithLabelValues("timeout")
	m.leaseFailed.WithLabelValues("error")
	return m
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

func (m *Metrics) observeRequest(method, route string, status int, d time.Duration) {
	m.requests.WithLabelValues(route, method, strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(route, method).Observe(d.Seconds())
}

// ObserveLease is a lock.Config.Observe callback.
func (m *Metrics) ObserveLease(e lock.Event) {
	switch {
	case e.Lost:
		m.leasesLost.Inc()
	case e.Err == nil:
		m.leaseWait.Observe(e.Wait.Seconds())
	case errors.Is(e.Err, lock.ErrTimeout):
		m.leaseWait.Observe(e.Wait.Seconds())
		m.leaseFailed.WithLabelValues("timeout").Inc()
	default:
		m.leaseFailed.WithLabelValues("error").Inc()
	}
}

// ObserveRecovered is a transaction.Config.OnRecovered callback.
func (m *Metrics) ObserveRecovered(*transaction.Transfer) { m.recoveredTxs.Inc() }

func (m *Metrics) observeTransfer(kind, outcome string) {
	m.transfers.WithLabelValues(kind, outcome).Inc()
}
