package faulttest

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestProcessFaults runs the scenarios that need the real binaries, built once for all of
// them. They run at the same time, from goroutines rather than t.Parallel (whose -parallel
// default is GOMAXPROCS, two here): most of their time is spent waiting for a dead
// process's leases to expire, not computing.
func TestProcessFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs bankd and embedmongo processes")
	}
	bins := build(t)
	var wg sync.WaitGroup
	for _, sc := range []struct {
		name string
		run  func(*testing.T, binaries)
	}{
		{"KillNineAndRestart", killNineAndRestart},
		{"ThreeInstancesOneKilled", threeInstancesOneKilled},
		{"DatabaseFaults", databaseFaults},
		{"ShutdownErrorUnderReads", shutdownErrorUnderReads},
	} {
		wg.Go(func() { t.Run(sc.name, func(t *testing.T) { sc.run(t, bins) }) })
	}
	wg.Wait()
}

// seed draws the load's transfers; logged so a failing plan can be looked at again.
func seed(t *testing.T) uint64 {
	s := uint64(time.Now().UnixNano())
	t.Logf("seed %d", s)
	return s
}

// waitAnswered waits until n transfers got their final answer (or 20 s pass): the moment
// to strike is mid-load, with requests in flight.
func waitAnswered(l *loadRun, n int64, done <-chan struct{}) {
	deadline := time.Now().Add(20 * time.Second)
	for l.answered.Load() < n && time.Now().Before(deadline) {
		select {
		case <-done:
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// waitLoad waits for every client to be done (each op is bounded by opBudget).
func waitLoad(t *testing.T, done <-chan struct{}) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(opBudget + 30*time.Second):
		t.Fatal("the load did not finish")
	}
}

// killNineAndRestart: bankd on a data directory is SIGKILLed mid-load and restarted on the
// same directory. The clients retry everything unanswered with the same key; the restarted
// process's recovery finishes what the dead one left half done.
func killNineAndRestart(t *testing.T, bins binaries) {
	c := newClient(t)
	dir, addr := t.TempDir(), freeAddr(t)
	base := "http://" + addr
	r := router{bases: []string{base}}
	first := startBankd(t, c, bins.bankd, "bankd-1", addr, []string{"--data-dir", dir})
	b := openBank(t, c, r, "kill")
	start := time.Now()
	l, done := c.startLoad(t.Context(), r, b.plan(seed(t), numTransfers))
	waitAnswered(l, numTransfers/3, done)
	first.kill(t)
	t.Logf("SIGKILL after %d of %d transfers answered", l.answered.Load(), numTransfers)
	time.Sleep(200 * time.Millisecond) // clients see the door closed for a moment
	second := startBankd(t, c, bins.bankd, "bankd-2", addr, []string{"--data-dir", dir})
	t.Logf("restarted after %v", time.Since(start).Round(time.Millisecond))
	waitLoad(t, done)
	l.report(t, time.Since(start))
	t.Logf("transfers recovered by the restarted process: %v", c.metric(t.Context(), base, "bankd_transfers_recovered_total"))
	verify(t, c, base, b, l)
	if !second.alive() {
		t.Errorf("restarted bankd died: %v", second.waitErr)
	}
}

// threeInstancesOneKilled: three bankd processes share one cmd/embedmongo; one is SIGKILLed
// mid-load. Its clients fail over to the survivors with the same keys; the survivors'
// recovery finishes its stuck transfers once its leases expire.
func threeInstancesOneKilled(t *testing.T, bins binaries) {
	c := newClient(t)
	_, uri := startEngine(t, bins.embedmongo)
	var procs []*proc
	var r router
	for i := range 3 {
		addr := freeAddr(t)
		procs = append(procs, startBankd(t, c, bins.bankd, fmt.Sprintf("bankd-%d", i), addr,
			[]string{"--instance-id", fmt.Sprintf("bankd-%d", i)}, "MONGODB_URI="+uri))
		r.bases = append(r.bases, "http://"+addr)
	}
	b := openBank(t, c, r, "shared")
	start := time.Now()
	l, done := c.startLoad(t.Context(), r, b.plan(seed(t), numTransfers))
	waitAnswered(l, numTransfers/3, done)
	procs[1].kill(t)
	t.Logf("SIGKILL bankd-1 after %d of %d transfers answered", l.answered.Load(), numTransfers)
	waitLoad(t, done)
	l.report(t, time.Since(start))
	recovered := c.metric(t.Context(), r.bases[0], "bankd_transfers_recovered_total") +
		c.metric(t.Context(), r.bases[2], "bankd_transfers_recovered_total")
	t.Logf("transfers recovered by the survivors: %v", recovered)
	verify(t, c, r.bases[2], b, l)
	for _, i := range []int{0, 2} {
		if !procs[i].alive() {
			t.Errorf("survivor bankd-%d died: %v", i, procs[i].waitErr)
		}
	}
}
