package lock

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// store is the database side of leases (mongo.go). acquire returns ErrHeld
// when the document is leased by someone else, and ErrNotFound (only when
// checkExists is set, to save a round trip while polling) when it is absent.
type store interface {
	acquire(ctx context.Context, key, owner string, d time.Duration, checkExists bool) (*Lease, error)
	// acquireOrInsert is acquire that inserts the document built from fields
	// when it does not exist (Lease.Created); ErrHeld when it exists, leased.
	acquireOrInsert(ctx context.Context, key, owner string, d time.Duration, fields bson.D) (*Lease, error)
	// acquireMany takes free leases in one command (Locker.AcquireMany).
	acquireMany(ctx context.Context, keys []string, owner string, d time.Duration, also bson.D) map[string]*Lease
	// insertMany inserts new leased documents in one round trip (Locker.InsertMany).
	insertMany(ctx context.Context, keys []string, owner string, d time.Duration, fields []bson.D) ([]*Lease, []error)
	renew(ctx context.Context, l *Lease) error
	release(ctx context.Context, l *Lease) error
}

// Locker hands out leases on the documents of one collection. It is safe for
// concurrent use; one Locker per collection per process keeps the local
// queues meaningful.
type Locker struct {
	cfg  Config
	name string // what is leased, for Event.Collection
	st   store
	q    queues
}

func newLocker(st store, name string, cfg Config) (*Locker, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Locker{cfg: cfg, name: name, st: st}, nil
}

// Owner is the owner id this Locker writes into the leases it takes.
func (l *Locker) Owner() string { return l.cfg.Owner }

// Config returns the effective configuration, defaults filled in.
func (l *Locker) Config() Config { return l.cfg }

// Acquire waits until it holds the lease on document key, for at most
// Config.WaitTimeout (ErrTimeout) or until ctx ends. Goroutines of this
// process wait for key first come, first served; only the first in line
// polls the database, with jittered exponential backoff.
func (l *Locker) Acquire(ctx context.Context, key string) (*Lease, error) {
	return l.acquireBy(ctx, key, l.cfg.Now().Add(l.cfg.WaitTimeout))
}

// TryAcquire takes the lease only if it is free right now: one database
// round trip, no waiting. It returns ErrHeld otherwise.
func (l *Locker) TryAcquire(ctx context.Context, key string) (*Lease, error) {
	return l.try(key, func() (*Lease, error) {
		return l.st.acquire(ctx, key, l.cfg.Owner, l.cfg.LeaseDuration, true)
	})
}

// try takes key's local turn, if free, for one attempt at its lease.
func (l *Locker) try(key string, attempt func() (*Lease, error)) (*Lease, error) {
	if !l.q.tryEnter(key) {
		return nil, ErrHeld
	}
	lease, err := attempt()
	if err != nil {
		l.q.leave(key)
		return nil, err
	}
	return lease, nil
}

// AcquirePair acquires the leases on two distinct documents, always in
// ascending key order so that two callers locking {a, b} and {b, a} cannot
// deadlock, within one shared wait deadline. If the second cannot be had, the
// first is given back. The leases are returned in argument order.
func (l *Locker) AcquirePair(ctx context.Context, a, b string) (la, lb *Lease, err error) {
	if a == b {
		return nil, nil, fmt.Errorf("lock: AcquirePair on the same key %q twice", a)
	}
	first, second := a, b
	if second < first {
		first, second = second, first
	}
	deadline := l.cfg.Now().Add(l.cfg.WaitTimeout)
	l1, err := l.acquireBy(ctx, first, deadline)
	if err != nil {
		return nil, nil, err
	}
	l2, err := l.acquireBy(ctx, second, deadline)
	if err != nil {
		l.giveBack(l1)
		return nil, nil, err
	}
	// A long wait for the second lease may have eaten into the first one's
	// lifetime: renew it rather than start work on a nearly expired lease.
	if l.Remaining(l1) < l1.Duration/2 {
		if err := l.Renew(ctx, l1); err != nil {
			l.giveBack(l2)
			l.Drop(l1)
			return nil, nil, err
		}
	}
	if first == a {
		return l1, l2, nil
	}
	return l2, l1, nil
}

// giveBack releases a lease on an error path, independent of the caller's context.
func (l *Locker) giveBack(lease *Lease) {
	ctx, cancel := context.WithTimeout(context.Background(), l.cfg.WaitTimeout)
	defer cancel()
	_ = l.Release(ctx, lease) // ErrLeaseLost or a dead database: it expires anyway
}

// AcquireOrInsert is Acquire for a document that may not exist yet: if there
// is no document with _id key, it inserts one made of fields (plus _id and
// the lease) and holds its lease, with Lease.Created set; if there is one, it
// waits for its lease as Acquire does and leaves its fields as they are. One
// round trip when uncontended: create-and-lock cannot be split by a crash.
func (l *Locker) AcquireOrInsert(ctx context.Context, key string, fields bson.D) (*Lease, error) {
	return l.acquireBy(ctx, key, l.cfg.Now().Add(l.cfg.WaitTimeout), fields)
}

// HeldHere reports whether a goroutine of this process holds key's lease or
// is taking it: a cheap look before a call that would wait for it.
func (l *Locker) HeldHere(key string) bool { return l.q.held(key) }

// TryAcquireOrInsert is AcquireOrInsert without the wait: it inserts the
// document, or takes the lease of an existing one that is free right now,
// and returns ErrHeld if a goroutine of this process or another instance
// holds it.
func (l *Locker) TryAcquireOrInsert(ctx context.Context, key string, fields bson.D) (*Lease, error) {
	return l.try(key, func() (*Lease, error) {
		return l.st.acquireOrInsert(ctx, key, l.cfg.Owner, l.cfg.LeaseDuration, fields)
	})
}

func (l *Locker) acquireBy(ctx context.Context, key string, deadline time.Time, insert ...bson.D) (*Lease, error) {
	start := l.cfg.Now()
	attempt := func(first bool) (*Lease, error) {
		if len(insert) > 0 {
			return l.st.acquireOrInsert(ctx, key, l.cfg.Owner, l.cfg.LeaseDuration, insert[0])
		}
		return l.st.acquire(ctx, key, l.cfg.Owner, l.cfg.LeaseDuration, first)
	}
	lease, err := l.wait(ctx, key, deadline, attempt)
	if l.cfg.Observe != nil {
		l.cfg.Observe(Event{Collection: l.name, Key: key, Wait: l.cfg.Now().Sub(start), Err: err})
	}
	return lease, err
}

func (l *Locker) wait(ctx context.Context, key string, deadline time.Time, try func(first bool) (*Lease, error)) (*Lease, error) {
	handed, err := l.q.enter(ctx, key, deadline, l.cfg.Now)
	if err != nil {
		var granted errTurnGranted
		if errors.As(err, &granted) {
			l.passOn(key, handed)
		}
		return nil, fmt.Errorf("lease %s: %w", key, err)
	}
	if handed != nil {
		handed.HandOffs++
		return handed, nil
	}
	for attempt := 0; ; attempt++ {
		lease, err := try(attempt == 0)
		if err == nil {
			return lease, nil
		}
		if !errors.Is(err, ErrHeld) {
			l.q.leave(key)
			return nil, err
		}
		remaining := deadline.Sub(l.cfg.Now())
		if remaining <= 0 {
			l.q.leave(key)
			return nil, fmt.Errorf("lease %s: %w", key, ErrTimeout)
		}
		if err := sleep(ctx, min(l.backoff(attempt), remaining)); err != nil {
			l.q.leave(key)
			return nil, err
		}
	}
}

// backoff is exponential from MinBackoff to MaxBackoff with "equal jitter"
// (half fixed, half random) so that instances polling one document spread out.
func (l *Locker) backoff(attempt int) time.Duration {
	d := l.cfg.MaxBackoff
	if attempt < 20 {
		d = min(l.cfg.MinBackoff<<attempt, l.cfg.MaxBackoff)
	}
	half := d / 2
	return half + rand.N(half+1)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// passOn hands a turn this goroutine received but cannot use to the next in line.
func (l *Locker) passOn(key string, handed *Lease) {
	if handed != nil {
		l.giveBack(handed)
		return
	}
	l.q.leave(key)
}

// Release gives the lease up. With Config.MaxHold set and the lease young
// enough, it passes the lease to the next goroutine of this process waiting
// for the same document instead (same token: fencing is unaffected, since
// the previous user is done with it). ErrLeaseLost means the lease had
// already expired and been taken; any writes fenced with it were refused.
// Releasing a lease this holder already gave up says ErrLeaseLost too,
// without a database write, unless the holder's own write released it
// (ReleasedByWrite): then Release is a no-op.
func (l *Locker) Release(ctx context.Context, lease *Lease) error {
	if lease.given {
		if lease.byWrite {
			return nil
		}
		return fmt.Errorf("release %s token %d: already given up: %w", lease.Key, lease.Token, ErrLeaseLost)
	}
	lease.given = true
	if l.handOffOK(lease) {
		next := *lease // the next holder's own copy: its flags are its own
		next.given = false
		if l.q.handOff(lease.Key, &next) {
			return nil
		}
	}
	err := l.st.release(ctx, lease)
	l.q.leave(lease.Key)
	if errors.Is(err, ErrLeaseLost) {
		l.lost(lease)
	}
	return err
}

func (l *Locker) handOffOK(lease *Lease) bool {
	return l.cfg.MaxHold > 0 && l.cfg.Now().Sub(lease.start) < l.cfg.MaxHold
}

// CanReleaseInWrite reports whether the holder should release lease as part
// of its last fenced write (ReleaseFields, then ReleasedByWrite) rather than
// by Release: true unless Release would hand it to a goroutine of this
// process queued for the same document, which is cheaper still. A waiter
// arriving after the answer merely acquires from the database.
func (l *Locker) CanReleaseInWrite(lease *Lease) bool {
	return !lease.given && !(l.handOffOK(lease) && l.q.waiting(lease.Key))
}

// ReleasedByWrite records that the holder's own fenced write released lease
// (ReleaseFields): the local turn passes to the next in line, and later
// Release and Drop calls on lease do nothing.
func (l *Locker) ReleasedByWrite(lease *Lease) {
	if lease.given {
		return
	}
	lease.given, lease.byWrite = true, true
	l.q.leave(lease.Key)
}

// Renew extends the lease by its duration from now (database clock). It
// fails with ErrLeaseLost if another owner has taken it.
func (l *Locker) Renew(ctx context.Context, lease *Lease) error {
	err := l.st.renew(ctx, lease)
	if errors.Is(err, ErrLeaseLost) {
		l.lost(lease)
	}
	return err
}

// Drop forgets the lease locally without a database write: after the caller
// released it in a write of its own (ReleaseFields; ReleasedByWrite says so
// more precisely), or to simulate a crash in tests (the database lease then
// runs until it expires). Dropping a lease already given up does nothing.
func (l *Locker) Drop(lease *Lease) {
	if lease.given {
		return
	}
	lease.given = true
	l.q.leave(lease.Key)
}

// Lost reports a lease found lost by a fenced write of the caller's, for Observe.
func (l *Locker) Lost(lease *Lease) { l.lost(lease) }

func (l *Locker) lost(lease *Lease) {
	if l.cfg.Observe != nil {
		l.cfg.Observe(Event{Collection: l.name, Key: lease.Key, Err: ErrLeaseLost, Lost: true})
	}
}

// Remaining is a conservative local estimate of the lease's remaining
// lifetime: measured from just before the acquiring request was sent, so it
// errs on the short side of the database's own judgement.
func (l *Locker) Remaining(lease *Lease) time.Duration {
	return lease.Duration - l.cfg.Now().Sub(lease.start)
}
