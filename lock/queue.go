package lock

import (
	"context"
	"sync"
	"time"
)

// queues gives each leased key a first-come-first-served turn within this
// process, so that goroutines contending for one document wait in line
// instead of all polling the database. The goroutine holding a key's turn is
// the only one of this process that talks to the database about that key.
type queues struct {
	mu sync.Mutex
	m  map[string]*keyQueue
}

type keyQueue struct {
	waiters []chan *Lease // front first; each gets nil (your turn) or a handed-off lease
}

// enter waits for key's turn. It returns a lease when the previous holder
// handed one over, else nil: the caller then acquires from the database.
func (q *queues) enter(ctx context.Context, key string, deadline time.Time, now func() time.Time) (*Lease, error) {
	q.mu.Lock()
	if q.m == nil {
		q.m = make(map[string]*keyQueue)
	}
	kq, busy := q.m[key]
	if !busy {
		q.m[key] = &keyQueue{}
		q.mu.Unlock()
		return nil, nil
	}
	ch := make(chan *Lease, 1)
	kq.waiters = append(kq.waiters, ch)
	q.mu.Unlock()

	timer := time.NewTimer(deadline.Sub(now()))
	defer timer.Stop()
	var err error
	select {
	case l := <-ch:
		return l, nil
	case <-ctx.Done():
		err = ctx.Err()
	case <-timer.C:
		err = ErrTimeout
	}
	q.mu.Lock()
	for i, w := range kq.waiters {
		if w == ch {
			kq.waiters = append(kq.waiters[:i], kq.waiters[i+1:]...)
			q.mu.Unlock()
			return nil, err
		}
	}
	q.mu.Unlock()
	// The turn was granted while we gave up: take it, so the caller can pass it on.
	return <-ch, errTurnGranted{err}
}

// errTurnGranted wraps a wait error when the turn arrived anyway; the caller
// owns the turn (and the lease, if one came with it) and must pass it on.
type errTurnGranted struct{ err error }

func (e errTurnGranted) Error() string { return e.err.Error() }
func (e errTurnGranted) Unwrap() error { return e.err }

// handOff gives lease to the next waiter for key, if there is one.
func (q *queues) handOff(key string, l *Lease) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	kq := q.m[key]
	if kq == nil || len(kq.waiters) == 0 {
		return false
	}
	next := kq.waiters[0]
	kq.waiters = kq.waiters[1:]
	next <- l
	return true
}

// waiting reports whether a goroutine of this process is queued for key.
func (q *queues) waiting(key string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	kq := q.m[key]
	return kq != nil && len(kq.waiters) > 0
}

// held reports whether a goroutine of this process has key's turn.
func (q *queues) held(key string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	_, busy := q.m[key]
	return busy
}

// leave ends the current turn for key and wakes the next waiter, who will
// acquire from the database.
func (q *queues) leave(key string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	kq := q.m[key]
	if kq == nil {
		return
	}
	if len(kq.waiters) == 0 {
		delete(q.m, key)
		return
	}
	next := kq.waiters[0]
	kq.waiters = kq.waiters[1:]
	next <- nil
}

// tryEnter takes key's turn only if nobody in this process holds it.
func (q *queues) tryEnter(key string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.m == nil {
		q.m = make(map[string]*keyQueue)
	}
	if _, busy := q.m[key]; busy {
		return false
	}
	q.m[key] = &keyQueue{}
	return true
}
