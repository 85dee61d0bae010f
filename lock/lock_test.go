package lock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/bankd/bankd/internal/testmongo"
)

func TestMain(m *testing.M) { testmongo.Main(m) }

// setup returns a collection with documents "a".."e" and a Locker factory.
func setup(t *testing.T) (*mongo.Collection, func(Config) *Locker) {
	t.Helper()
	coll := testmongo.Database(t).Collection("docs")
	ctx := context.Background()
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "n", Value: int64(0)}}); err != nil {
			t.Fatal(err)
		}
	}
	return coll, func(cfg Config) *Locker {
		t.Helper()
		l, err := New(coll, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
}

func TestAcquireReleaseRenew(t *testing.T) {
	_, newLocker := setup(t)
	ctx := context.Background()
	a := newLocker(Config{Owner: "A", WaitTimeout: 100 * time.Millisecond})
	b := newLocker(Config{Owner: "B", WaitTimeout: 100 * time.Millisecond})

	la, err := a.Acquire(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if la.Owner != "A" || la.Token != 1 || la.Since.IsZero() {
		t.Fatalf("first lease = %+v, want owner A, token 1, a database time", la)
	}
	steps := []struct {
		name string
		do   func() error
		want error
	}{
		{"other owner try", func() error { _, err := b.TryAcquire(ctx, "a"); return err }, ErrHeld},
		{"other owner waits out", func() error { _, err := b.Acquire(ctx, "a"); return err }, ErrTimeout},
		{"holder renews", func() error { return a.Renew(ctx, la) }, nil},
		{"missing document", func() error { _, err := b.Acquire(ctx, "zz"); return err }, ErrNotFound},
		{"same key pair", func() error { _, _, err := b.AcquirePair(ctx, "c", "c"); return err }, nil},
		{"holder releases", func() error { return a.Release(ctx, la) }, nil},
		{"release twice", func() error { return a.Release(ctx, la) }, ErrLeaseLost},
		{"renew released", func() error { return a.Renew(ctx, la) }, ErrLeaseLost},
	}
	for _, s := range steps {
		err := s.do()
		if s.name == "same key pair" {
			if err == nil {
				t.Errorf("%s: got nil error, want one", s.name)
			}
			continue
		}
		if !errors.Is(err, s.want) {
			t.Errorf("%s: got %v, want %v", s.name, err, s.want)
		}
	}
	lb, err := b.Acquire(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if lb.Token != 2 {
		t.Errorf("second acquisition token = %d, want 2", lb.Token)
	}
}

// TestExpiryJudgedByDatabaseClock: an instance whose own clock runs an hour
// ahead still cannot take a live lease, and takes an expired one.
func TestExpiryJudgedByDatabaseClock(t *testing.T) {
	_, newLocker := setup(t)
	ctx := context.Background()
	holder := newLocker(Config{Owner: "H", LeaseDuration: 300 * time.Millisecond})
	skewed := newLocker(Config{Owner: "S", WaitTimeout: 5 * time.Second,
		Now: func() time.Time { return time.Now().Add(time.Hour) }})

	lh, err := holder.Acquire(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := skewed.TryAcquire(ctx, "b"); !errors.Is(err, ErrHeld) {
		t.Fatalf("skewed instance on a live lease: got %v, want ErrHeld", err)
	}
	ls, err := skewed.Acquire(ctx, "b") // polls until the database says it expired
	if err != nil {
		t.Fatal(err)
	}
	if ls.Token != lh.Token+1 {
		t.Errorf("token after take-over = %d, want %d", ls.Token, lh.Token+1)
	}
	if got := ls.Since.Sub(lh.Since); got < lh.Duration {
		t.Errorf("taken %v after acquisition by the database clock, want >= %v", got, lh.Duration)
	}
}

// TestFencingRefusesStalledHolder: a holder that stalls past expiry while
// another takes the lease cannot write, and learns its lease is lost.
func TestFencingRefusesStalledHolder(t *testing.T) {
	coll, newLocker := setup(t)
	ctx := context.Background()
	stalled := newLocker(Config{Owner: "old", LeaseDuration: 100 * time.Millisecond})
	other := newLocker(Config{Owner: "new", WaitTimeout: 5 * time.Second})

	old, err := stalled.Acquire(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	// The stall: the old holder does nothing while the other waits the lease out.
	cur, err := other.Acquire(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	inc := bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: int64(1)}}}}
	res, err := coll.UpdateOne(ctx, old.Fence(), inc)
	if err != nil {
		t.Fatal(err)
	}
	if res.MatchedCount != 0 {
		t.Errorf("stale holder's fenced write matched %d documents, want 0", res.MatchedCount)
	}
	if err := stalled.Renew(ctx, old); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("stale holder renews: got %v, want ErrLeaseLost", err)
	}
	if res, err := coll.UpdateOne(ctx, cur.Fence(), inc); err != nil || res.MatchedCount != 1 {
		t.Errorf("current holder's fenced write: matched %v, err %v; want 1, nil", res, err)
	}
	if err := stalled.Release(ctx, old); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("stale holder releases: got %v, want ErrLeaseLost", err)
	}
	if err := other.Release(ctx, cur); err != nil {
		t.Errorf("current holder releases: %v", err)
	}
}

// TestLocalQueueIsFIFO: goroutines of one process get the lease in the order
// they asked for it.
func TestLocalQueueIsFIFO(t *testing.T) {
	_, newLocker := setup(t)
	ctx := context.Background()
	l := newLocker(Config{Owner: "Q", WaitTimeout: 10 * time.Second})
	first, err := l.Acquire(ctx, "d")
	if err != nil {
		t.Fatal(err)
	}
	const n = 5
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lease, err := l.Acquire(ctx, "d")
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			if err := l.Release(ctx, lease); err != nil {
				t.Error(err)
			}
		}()
		waitQueued(t, l, "d", i+1)
	}
	if err := l.Release(ctx, first); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if fmt.Sprint(order) != "[0 1 2 3 4]" {
		t.Errorf("grant order = %v, want [0 1 2 3 4]", order)
	}
}

func waitQueued(t *testing.T, l *Locker, key string, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		l.q.mu.Lock()
		got := 0
		if kq := l.q.m[key]; kq != nil {
			got = len(kq.waiters)
		}
		l.q.mu.Unlock()
		if got == n {
			return
		}
	}
	t.Fatalf("never saw %d waiters for %s", n, key)
}

// TestHandOff: with MaxHold, Release passes the lease to the next local
// waiter, same token, without a database round trip.
func TestHandOff(t *testing.T) {
	_, newLocker := setup(t)
	ctx := context.Background()
	l := newLocker(Config{Owner: "H", MaxHold: time.Second})
	first, err := l.Acquire(ctx, "e")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *Lease)
	go func() {
		lease, err := l.Acquire(ctx, "e")
		if err != nil {
			t.Error(err)
		}
		got <- lease
	}()
	waitQueued(t, l, "e", 1)
	if err := l.Release(ctx, first); err != nil {
		t.Fatal(err)
	}
	second := <-got
	if second == nil {
		t.Fatal("no lease handed off")
	}
	if second.Token != first.Token || second.HandOffs != 1 {
		t.Errorf("handed-off lease token %d hand-offs %d, want token %d hand-offs 1", second.Token, second.HandOffs, first.Token)
	}
	if err := l.Release(ctx, second); err != nil { // nobody waits: a real release
		t.Fatal(err)
	}
	if _, err := newLocker(Config{Owner: "X"}).TryAcquire(ctx, "e"); err != nil {
		t.Errorf("after the last release: %v", err)
	}
}

// TestAcquirePair: opposite orders never deadlock, and a pair that cannot be
// completed gives the first lease back.
func TestAcquirePair(t *testing.T) {
	coll, newLocker := setup(t)
	ctx := context.Background()
	lockers := []*Locker{
		newLocker(Config{Owner: "P1", WaitTimeout: 20 * time.Second}),
		newLocker(Config{Owner: "P2", WaitTimeout: 20 * time.Second}),
	}
	const workers, rounds = 8, 10
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := lockers[w%2]
			for r := range rounds {
				x, y := "a", "b"
				if (w+r)%2 == 1 {
					x, y = y, x
				}
				lx, ly, err := l.AcquirePair(ctx, x, y)
				if err != nil {
					t.Error(err)
					return
				}
				if lx.Key != x || ly.Key != y {
					t.Errorf("pair returned %s,%s, want %s,%s", lx.Key, ly.Key, x, y)
				}
				for _, le := range []*Lease{lx, ly} {
					res, err := coll.UpdateOne(ctx, le.Fence(), bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: int64(1)}}}})
					if err != nil || res.MatchedCount != 1 {
						t.Errorf("fenced write under pair: %v %v", res, err)
					}
				}
				_ = l.Release(ctx, lx)
				_ = l.Release(ctx, ly)
			}
		}()
	}
	wg.Wait()
	for _, id := range []string{"a", "b"} {
		var d struct{ N int64 }
		if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&d); err != nil {
			t.Fatal(err)
		}
		if d.N != workers*rounds {
			t.Errorf("%s: n = %d, want %d", id, d.N, workers*rounds)
		}
	}

	// Give-back: c is held elsewhere, so {a, c} times out and a is free again.
	holder := newLocker(Config{Owner: "H"})
	lc, err := holder.Acquire(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	impatient := newLocker(Config{Owner: "I", WaitTimeout: 100 * time.Millisecond})
	if _, _, err := impatient.AcquirePair(ctx, "a", "c"); !errors.Is(err, ErrTimeout) {
		t.Fatalf("pair with a held member: got %v, want ErrTimeout", err)
	}
	if _, err := newLocker(Config{Owner: "J"}).TryAcquire(ctx, "a"); err != nil {
		t.Errorf("first lease of the failed pair was not given back: %v", err)
	}
	_ = holder.Release(ctx, lc)
}

func TestAcquireOrInsert(t *testing.T) {
	coll, newLocker := setup(t)
	ctx := context.Background()
	a := newLocker(Config{Owner: "A", WaitTimeout: 100 * time.Millisecond})
	b := newLocker(Config{Owner: "B", WaitTimeout: 100 * time.Millisecond})
	fields := bson.D{{Key: "v", Value: "first"}}

	la, err := a.AcquireOrInsert(ctx, "new", fields)
	if err != nil {
		t.Fatal(err)
	}
	if !la.Created || la.Token != 1 {
		t.Fatalf("lease = %+v, want created with token 1", la)
	}
	if _, err := b.AcquireOrInsert(ctx, "new", bson.D{{Key: "v", Value: "second"}}); !errors.Is(err, ErrTimeout) {
		t.Fatalf("while held: got %v, want ErrTimeout", err)
	}
	if err := a.Release(ctx, la); err != nil {
		t.Fatal(err)
	}
	lb, err := b.AcquireOrInsert(ctx, "new", bson.D{{Key: "v", Value: "second"}})
	if err != nil {
		t.Fatal(err)
	}
	if lb.Created || lb.Token != 2 || lb.Doc.Lookup("v").StringValue() != "first" {
		t.Errorf("existing: created %v token %d v %s, want false 2 first", lb.Created, lb.Token, lb.Doc.Lookup("v"))
	}
	var d bson.M
	if err := coll.FindOne(ctx, lb.Fence()).Decode(&d); err != nil {
		t.Fatalf("fence of the taken lease matches nothing: %v", err)
	}
	if d["v"] != "first" {
		t.Errorf("stored v = %v, want first", d["v"])
	}
}

// TryAcquireOrInsert never waits: a document held here or elsewhere is ErrHeld at once, a free
// one is taken, a missing one inserted.
func TestTryAcquireOrInsert(t *testing.T) {
	_, newLocker := setup(t)
	ctx := context.Background()
	a := newLocker(Config{Owner: "A", WaitTimeout: time.Minute})
	b := newLocker(Config{Owner: "B", WaitTimeout: time.Minute})
	fields := bson.D{{Key: "v", Value: "first"}}

	la, err := a.TryAcquireOrInsert(ctx, "new", fields)
	if err != nil || !la.Created || la.Token != 1 {
		t.Fatalf("insert: lease %+v, err %v; want created with token 1", la, err)
	}
	start := time.Now()
	if _, err := b.TryAcquireOrInsert(ctx, "new", fields); !errors.Is(err, ErrHeld) {
		t.Fatalf("held by another instance: got %v, want ErrHeld", err)
	}
	if _, err := a.TryAcquireOrInsert(ctx, "new", fields); !errors.Is(err, ErrHeld) {
		t.Fatalf("held by this instance: got %v, want ErrHeld", err)
	}
	if waited := time.Since(start); waited > 10*time.Second {
		t.Fatalf("waited %v with a one-minute WaitTimeout: must not wait", waited)
	}
	if err := a.Release(ctx, la); err != nil {
		t.Fatal(err)
	}
	lb, err := b.TryAcquireOrInsert(ctx, "new", bson.D{{Key: "v", Value: "second"}})
	if err != nil || lb.Created || lb.Token != 2 || lb.Doc.Lookup("v").StringValue() != "first" {
		t.Fatalf("free: lease %+v, err %v; want taken, token 2, fields kept", lb, err)
	}
	// A refused try leaves this process's queue as it was: the next try gets its turn.
	if err := b.Release(ctx, lb); err != nil {
		t.Fatal(err)
	}
	if _, err := a.TryAcquireOrInsert(ctx, "new", fields); err != nil {
		t.Fatalf("after release: %v", err)
	}
}
