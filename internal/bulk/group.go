package bulk

import (
	"context"
	"sync"
)

// Group turns concurrent calls into batches (group commit): calls that
// arrive while a batch is being run wait and go together in the next one,
// so a batch costs one round trip however many callers share it, and a
// lone caller is never delayed by a timer.
type Group[In, Out any] struct {
	// Max bounds a batch (default MaxStatements).
	Max int
	// Parallel is how many batches may run at once (default 1). A batch's
	// time is mostly round trips; a second one in flight uses it.
	Parallel int
	// Keys, if set, names what an input touches. With Parallel above 1, a
	// batch never takes an input sharing a key with a running batch, nor
	// with an earlier input still waiting: the inputs of one key run one
	// batch at a time, in the order they arrived. (With one batch at a
	// time that holds anyway, and Keys is not called.)
	Keys func(In) []string
	// Run does a batch and returns one outcome per input, in order. It gets
	// a context of its own: one caller giving up must not fail the others.
	Run func(ctx context.Context, in []In) []Out

	mu      sync.Mutex
	queue   []*call[In, Out]
	running int            // batch loops under way
	busy    map[string]int // keys of the batches running, with how many hold each
}

type call[In, Out any] struct {
	in   In
	done chan Out // buffered: the batch never waits for its caller
}

// Do queues in for the next batch and waits for its outcome, or for ctx to
// end (the batch may still run it: callers must treat that as an unknown
// outcome, as with any write whose answer was lost).
func (g *Group[In, Out]) Do(ctx context.Context, in In) (Out, error) {
	c := &call[In, Out]{in: in, done: make(chan Out, 1)}
	g.mu.Lock()
	g.queue = append(g.queue, c)
	start := g.running < max(g.Parallel, 1)
	if start {
		g.running++
	}
	g.mu.Unlock()
	if start {
		go g.loop()
	}
	select {
	case out := <-c.done:
		return out, nil
	case <-ctx.Done():
		var zero Out
		return zero, ctx.Err()
	}
}

// loop runs batches until none can be taken; another loop, or the next
// call, takes what it leaves.
func (g *Group[In, Out]) loop() {
	for {
		g.mu.Lock()
		calls, keys := g.take()
		if len(calls) == 0 {
			g.running--
			g.mu.Unlock()
			return
		}
		g.mu.Unlock()

		in := make([]In, len(calls))
		for i, c := range calls {
			in[i] = c.in
		}
		out := g.Run(context.Background(), in)

		g.mu.Lock()
		for _, k := range keys {
			if g.busy[k]--; g.busy[k] == 0 {
				delete(g.busy, k)
			}
		}
		g.mu.Unlock()
		for i, c := range calls {
			c.done <- out[i]
		}
	}
}

// take removes the next batch from the queue, in arrival order, skipping
// inputs that touch a busy key or a key of an input skipped before them,
// and marks the batch's keys busy. It is called with g.mu held.
func (g *Group[In, Out]) take() ([]*call[In, Out], []string) {
	limit := g.Max
	if limit <= 0 {
		limit = MaxStatements
	}
	if g.Keys == nil || g.Parallel <= 1 {
		n := min(len(g.queue), limit)
		calls := append([]*call[In, Out](nil), g.queue[:n]...)
		g.queue = append(g.queue[:0], g.queue[n:]...)
		return calls, nil
	}
	if g.busy == nil {
		g.busy = make(map[string]int)
	}
	var calls []*call[In, Out]
	mine := map[string]bool{}    // keys of this batch
	blocked := map[string]bool{} // keys of inputs left waiting
	rest := g.queue[:0]
	for _, c := range g.queue {
		ks := g.Keys(c.in)
		ok := len(calls) < limit
		for _, k := range ks {
			if blocked[k] || g.busy[k] > 0 {
				ok = false
			}
		}
		if !ok {
			for _, k := range ks {
				blocked[k] = true
			}
			rest = append(rest, c)
			continue
		}
		calls = append(calls, c)
		for _, k := range ks {
			mine[k] = true
		}
	}
	clear(g.queue[len(rest):]) // drop references to the calls taken
	g.queue = rest
	keys := make([]string, 0, len(mine))
	for k := range mine {
		g.busy[k]++
		keys = append(keys, k)
	}
	return calls, keys
}
