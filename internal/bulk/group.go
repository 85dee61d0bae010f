package bulk

import (
	"context"
	"slices"
	"sync"
)

// Group turns concurrent calls into batches (group commit): calls that
// arrive while a batch is being run wait and go together in the next one,
// so a batch costs one round trip however many callers share it, and a
// lone caller is never delayed by a timer.
type Group[In, Out any] struct {
	// Max bounds a batch (default MaxStatements).
	Max int
	// Run does a batch and returns one outcome per input, in order. It gets
	// a context of its own: one caller giving up must not fail the others.
	Run func(ctx context.Context, in []In) []Out

	mu      sync.Mutex
	queue   []*call[In, Out]
	running bool
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
	start := !g.running
	g.running = true
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

func (g *Group[In, Out]) loop() {
	max := g.Max
	if max <= 0 {
		max = MaxStatements
	}
	for {
		g.mu.Lock()
		if len(g.queue) == 0 {
			g.running = false
			g.mu.Unlock()
			return
		}
		n := min(len(g.queue), max)
		calls := slices.Clone(g.queue[:n])
		g.queue = slices.Delete(g.queue, 0, n)
		g.mu.Unlock()

		in := make([]In, n)
		for i, c := range calls {
			in[i] = c.in
		}
		out := g.Run(context.Background(), in)
		for i, c := range calls {
			c.done <- out[i]
		}
	}
}
