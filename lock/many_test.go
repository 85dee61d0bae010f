package lock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestAcquireMany: one call leases exactly the free documents, with the
// tokens the database wrote, and leaves out those held elsewhere, held by a
// goroutine of this process, or missing; its leases fence like any other.
func TestAcquireMany(t *testing.T) {
	coll, newLocker := setup(t)
	ctx := context.Background()
	a := newLocker(Config{Owner: "A"})
	b := newLocker(Config{Owner: "B", LeaseDuration: time.Second})
	held, err := b.Acquire(ctx, "b") // held elsewhere
	if err != nil {
		t.Fatal(err)
	}
	local, err := a.Acquire(ctx, "c") // held by a goroutine here
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Release(ctx, local); err != nil {
		t.Fatal(err)
	}
	local, _ = a.Acquire(ctx, "c") // token 2

	got := a.AcquireMany(ctx, []string{"a", "b", "c", "d", "zz"}, nil)
	keys := make([]string, 0, len(got))
	for k := range got {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"a", "d"}) {
		t.Fatalf("leased %v, want [a d]", keys)
	}
	for k, l := range got {
		var doc struct {
			Owner string `bson:"lockOwner"`
			Token int64  `bson:"fencingToken"`
		}
		if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: k}}).Decode(&doc); err != nil {
			t.Fatal(err)
		}
		if l.Owner != "A" || doc.Owner != "A" || l.Token != doc.Token || l.Token != 1 || len(l.Doc) == 0 {
			t.Errorf("%s: lease %+v, stored %+v", k, l, doc)
		}
	}
	if _, err := b.TryAcquire(ctx, "a"); !errors.Is(err, ErrHeld) {
		t.Errorf("another owner took a leased document: %v", err)
	}
	// A local goroutine waits its turn behind a lease AcquireMany took, and gets it on release.
	done := make(chan error, 1)
	go func() {
		l, err := a.Acquire(ctx, "d")
		if err == nil {
			err = a.Release(ctx, l)
		}
		done <- err
	}()
	waitQueued(t, a, "d", 1)
	for _, l := range got {
		if err := a.Release(ctx, l); err != nil {
			t.Errorf("release %s: %v", l.Key, err)
		}
	}
	if err := <-done; err != nil {
		t.Errorf("waiter: %v", err)
	}
	_ = a.Release(ctx, local)
	_ = b.Release(ctx, held)
	// After release the acquisition id is gone with the rest of the lease.
	n, err := coll.CountDocuments(ctx, bson.D{{Key: FieldAcquisition, Value: bson.D{{Key: "$exists", Value: true}}}})
	if err != nil || n != 0 {
		t.Errorf("%d documents keep an acquisition id after release (%v)", n, err)
	}
}

// TestAcquireManyNeverTwoHolders: owners racing with AcquireMany and
// TryAcquire over the same documents never both hold one.
func TestAcquireManyNeverTwoHolders(t *testing.T) {
	coll, newLocker := setup(t)
	ctx := context.Background()
	keys := []string{"a", "b", "c", "d", "e"}
	var mu sync.Mutex
	holders := map[string]string{}
	var violations []string
	take := func(owner string, ls []*Lease) {
		mu.Lock()
		defer mu.Unlock()
		for _, l := range ls {
			if h, ok := holders[l.Key]; ok {
				violations = append(violations, fmt.Sprintf("%s held by %s and %s", l.Key, h, owner))
			}
			holders[l.Key] = owner
		}
	}
	give := func(ls []*Lease) {
		mu.Lock()
		for _, l := range ls {
			delete(holders, l.Key)
		}
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for i := range 8 {
		owner := fmt.Sprintf("o%d", i)
		l := newLocker(Config{Owner: owner})
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 30 {
				var ls []*Lease
				if i%2 == 0 {
					for _, x := range l.AcquireMany(ctx, keys, nil) {
						ls = append(ls, x)
					}
				} else if x, err := l.TryAcquire(ctx, keys[i%len(keys)]); err == nil {
					ls = append(ls, x)
				}
				take(owner, ls)
				give(ls)
				for _, x := range ls {
					if err := l.Release(ctx, x); err != nil {
						t.Errorf("%s release %s: %v", owner, x.Key, err)
					}
				}
			}
		}()
	}
	wg.Wait()
	if len(violations) > 0 {
		t.Fatalf("%d double holds, first: %s", len(violations), violations[0])
	}
	n, _ := coll.CountDocuments(ctx, bson.D{{Key: FieldOwner, Value: bson.D{{Key: "$exists", Value: true}}}})
	if n != 0 {
		t.Errorf("%d leases left held", n)
	}
}

// TestAcquireManyAlsoOnlyWithTheLease: the extra operators are applied in
// the write that leases each document, and not at all to a document held
// elsewhere; a lease taken again keeps counting its token up.
func TestAcquireManyAlsoOnlyWithTheLease(t *testing.T) {
	coll, newLocker := setup(t)
	ctx := context.Background()
	a := newLocker(Config{Owner: "A"})
	b := newLocker(Config{Owner: "B"})
	for _, id := range []string{"held", "free"} {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "tags", Value: bson.A{"x", "y"}}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Acquire(ctx, "held"); err != nil {
		t.Fatal(err)
	}
	also := bson.D{{Key: "$pull", Value: bson.D{{Key: "tags", Value: "x"}}}, {Key: "$set", Value: bson.D{{Key: "touched", Value: true}}}}
	got := a.AcquireMany(ctx, []string{"held", "free"}, also)
	if got["free"] == nil || got["held"] != nil {
		t.Fatalf("leased %v, want only free", got)
	}
	var free, held bson.M
	_ = coll.FindOne(ctx, bson.D{{Key: "_id", Value: "free"}}).Decode(&free)
	_ = coll.FindOne(ctx, bson.D{{Key: "_id", Value: "held"}}).Decode(&held)
	if tags, _ := free["tags"].(bson.A); !slices.Equal(tags, bson.A{"y"}) || free["touched"] != true {
		t.Errorf("free is %v: the $pull and $set did not come with its lease", free)
	}
	if tags, _ := held["tags"].(bson.A); !slices.Equal(tags, bson.A{"x", "y"}) || held["touched"] != nil {
		t.Errorf("held elsewhere, yet written: %v", held)
	}
	if err := a.Release(ctx, got["free"]); err != nil {
		t.Fatal(err)
	}
	again := a.AcquireMany(ctx, []string{"free"}, nil)
	if l := again["free"]; l == nil || l.Token != got["free"].Token+1 || l.Since.IsZero() {
		t.Fatalf("second lease %+v after token %d", l, got["free"].Token)
	}
}
