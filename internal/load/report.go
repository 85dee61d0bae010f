package load

import (
	"fmt"
	"time"
)

// maxViolations bounds how many broken invariants the report spells out.
const maxViolations = 20

// Report is bankload's final JSON line.
type Report struct {
	TransfersOK    int64            `json:"transfers_ok"`
	ThroughputPerS float64          `json:"throughput_per_s"` // completed transfers per second
	P50ms          float64          `json:"p50_ms"`
	P99ms          float64          `json:"p99_ms"`
	MaxMs          float64          `json:"max_ms"`
	Errors         map[string]int64 `json:"errors"`         // final outcomes other than ok, by code
	Retries        int64            `json:"retries"`        // transfers whose answer was dropped and retried
	RetryRequests  int64            `json:"retry_requests"` // requests those retries took
	DroppedLost    int64            `json:"dropped_lost"`   // dropped answers that never arrived at all
	RetryMaxMs     float64          `json:"retry_max_ms"`   // longest wait from a dropped send to its answer
	Transfers      int64            `json:"transfers"`      // transfers with a final outcome
	Accounts       int              `json:"accounts"`
	Clients        int              `json:"clients"`
	Skew           string           `json:"skew"`
	DurationS      float64          `json:"duration_s"`
	InvariantsOK   bool             `json:"invariants_ok"`
	Violations     []string         `json:"violations,omitempty"`
}

func (r *runner) report(elapsed time.Duration, violations []string) *Report {
	s := r.st
	s.mu.Lock()
	defer s.mu.Unlock()
	rep := &Report{
		TransfersOK:   s.outcomes["ok"],
		P50ms:         round2(float64(s.total.Percentile(0.50)) / 1e6),
		P99ms:         round2(float64(s.total.Percentile(0.99)) / 1e6),
		MaxMs:         round2(float64(s.total.Max()) / 1e6),
		Errors:        make(map[string]int64),
		Retries:       s.retries,
		RetryRequests: s.tries,
		DroppedLost:   s.lost,
		RetryMaxMs:    round2(float64(s.retryMax) / 1e6),
		Transfers:     s.done,
		Accounts:      r.cfg.Accounts,
		Clients:       r.cfg.Clients,
		Skew:          r.cfg.Skew.String(),
		DurationS:     round2(elapsed.Seconds()),
		InvariantsOK:  len(violations) == 0,
	}
	if elapsed > 0 {
		rep.ThroughputPerS = round2(float64(rep.TransfersOK) / elapsed.Seconds())
	}
	for k, n := range s.outcomes {
		if k != "ok" {
			rep.Errors[k] = n
		}
	}
	if len(violations) > maxViolations {
		more := len(violations) - maxViolations
		violations = append(violations[:maxViolations:maxViolations], fmt.Sprintf("… and %d more", more))
	}
	rep.Violations = violations
	return rep
}
