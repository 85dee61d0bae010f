package bulk

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type keyed struct {
	id   int
	keys []string
}

func keysOf(k keyed) []string { return k.keys }

// TestGroupTakeKeepsEachKeysOrder: a batch skips inputs touching a busy key
// or a key of an input it skipped, and takes the rest in arrival order.
func TestGroupTakeKeepsEachKeysOrder(t *testing.T) {
	g := Group[keyed, int]{Max: 3, Parallel: 2, Keys: keysOf, busy: map[string]int{"b": 1}}
	for i, ks := range [][]string{{"a", "b"}, {"a", "c"}, {"d"}, {"c", "e"}, {"f"}, {"g"}, {"d", "h"}} {
		g.queue = append(g.queue, &call[keyed, int]{in: keyed{i, ks}})
	}
	ids := func(cs []*call[keyed, int]) (out []int) {
		for _, c := range cs {
			out = append(out, c.in.id)
		}
		return out
	}
	// 0 touches busy b; 1 touches a, held back by 0; 2 goes; 3 touches c, held back
	// by 1; 4 and 5 go and fill the batch; 6 is over the limit.
	calls, keys := g.take()
	if got := ids(calls); !slices.Equal(got, []int{2, 4, 5}) {
		t.Fatalf("took %v, want [2 4 5]", got)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"d", "f", "g"}) || g.busy["d"] != 1 || g.busy["b"] != 1 {
		t.Fatalf("keys %v, busy %v", keys, g.busy)
	}
	if got := ids(g.queue); !slices.Equal(got, []int{0, 1, 3, 6}) {
		t.Fatalf("left %v, want [0 1 3 6]", got)
	}
	// With b free, 0, 1 and 3 go; 6 waits for d.
	delete(g.busy, "b")
	if calls, _ = g.take(); !slices.Equal(ids(calls), []int{0, 1, 3}) {
		t.Fatalf("then took %v, want [0 1 3]", ids(calls))
	}
}

// TestGroupParallelBatchesNeverShareAKey: many callers on overlapping keys,
// two batches at a time. No key is ever in two running batches, batches do
// overlap in time, and every caller gets its own outcome.
func TestGroupParallelBatchesNeverShareAKey(t *testing.T) {
	var (
		mu        sync.Mutex
		inUse     = map[string]bool{}
		running   atomic.Int32
		overlaps  atomic.Int32
		violation atomic.Value
	)
	g := Group[keyed, int]{Max: 8, Parallel: 2, Keys: keysOf}
	g.Run = func(_ context.Context, in []keyed) []int {
		mu.Lock()
		for _, it := range in {
			for _, k := range it.keys {
				if inUse[k] {
					violation.Store(fmt.Sprintf("key %s in two running batches", k))
				}
			}
		}
		for _, it := range in {
			for _, k := range it.keys {
				inUse[k] = true
			}
		}
		mu.Unlock()
		if running.Add(1) > 1 {
			overlaps.Add(1)
		}
		time.Sleep(200 * time.Microsecond)
		running.Add(-1)
		mu.Lock()
		for _, it := range in {
			for _, k := range it.keys {
				delete(inUse, k)
			}
		}
		mu.Unlock()
		out := make([]int, len(in))
		for i, it := range in {
			out[i] = it.id * 10
		}
		return out
	}
	var wg sync.WaitGroup
	for w := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				id := w*1000 + i
				ks := []string{fmt.Sprint("k", (w+i)%20), fmt.Sprint("k", (w*7+i*3)%20)}
				out, err := g.Do(context.Background(), keyed{id, ks})
				if err != nil || out != id*10 {
					violation.Store(fmt.Sprintf("call %d got %d, %v", id, out, err))
				}
			}
		}()
	}
	wg.Wait()
	if v := violation.Load(); v != nil {
		t.Fatal(v)
	}
	if overlaps.Load() == 0 {
		t.Error("no two batches ever ran at once")
	}
	// Callers are answered before their loop looks for more work and ends:
	// give the loops a moment to see the empty queue.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		g.mu.Lock()
		queued, busy, running := len(g.queue), len(g.busy), g.running
		g.mu.Unlock()
		if queued == 0 && busy == 0 && running == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("left behind: queue %d, busy keys %d, loops running %d", queued, busy, running)
		}
	}
}
