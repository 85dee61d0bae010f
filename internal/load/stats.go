package load

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// stats gathers the load phase's outcomes from all clients.
type stats struct {
	mu       sync.Mutex
	total    Histogram // latency of every answered request
	window   Histogram // the same, since the last progress line
	outcomes map[string]int64
	done     int64 // transfers with a final outcome
	winDone  int64
	winOK    int64
	retries  int64         // transfers whose answer was dropped and retried
	tries    int64         // extra requests sent for them
	lost     int64         // dropped answers that really never arrived
	retryMax time.Duration // longest time from a dropped send to its answer

	recentP50 atomic.Int64 // ns; drives how long a dropped request may run
}

func newStats() *stats { return &stats{outcomes: make(map[string]int64)} }

// latency records one answered request.
func (s *stats) latency(d time.Duration) {
	s.mu.Lock()
	s.total.Record(d)
	s.window.Record(d)
	s.mu.Unlock()
}

// outcome records one transfer's final outcome ("ok" or an error code).
func (s *stats) outcome(o string) {
	s.mu.Lock()
	s.outcomes[o]++
	s.done++
	s.winDone++
	if o == "ok" {
		s.winOK++
	}
	s.mu.Unlock()
}

func (s *stats) retried(extraTries int, lost bool, took time.Duration) {
	s.mu.Lock()
	s.retries++
	s.retryMax = max(s.retryMax, took)
	s.tries += int64(extraTries)
	if lost {
		s.lost++
	}
	s.mu.Unlock()
}

// progress writes one line about the last interval and starts a new one.
func (s *stats) progress(w io.Writer, elapsed, interval time.Duration) {
	s.mu.Lock()
	p50, p99 := s.window.Percentile(0.50), s.window.Percentile(0.99)
	if p50 > 0 {
		s.recentP50.Store(int64(p50))
	}
	rate := float64(s.winDone) / interval.Seconds()
	okRate := float64(s.winOK) / interval.Seconds()
	errs := formatErrors(s.outcomes)
	s.window.Reset()
	s.winDone, s.winOK = 0, 0
	s.mu.Unlock()
	fmt.Fprintf(w, "bankload: %4.0fs  rate=%.0f/s ok=%.0f/s  p50=%s p99=%s  errors: %s\n",
		elapsed.Seconds(), rate, okRate, ms(p50), ms(p99), errs)
}

func formatErrors(outcomes map[string]int64) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(outcomes)) {
		if k == "ok" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%d", k, outcomes[k])
	}
	if b.Len() == 0 {
		return "none"
	}
	return b.String()
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d)/1e6) }
