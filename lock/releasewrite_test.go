package lock

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestReleasedByWrite: a holder releases its lease in its own fenced write
// (ReleaseFields); the next local waiter gets the turn and acquires from the
// database, and the old holder's Release and Drop do nothing more.
func TestReleasedByWrite(t *testing.T) {
	coll, newLocker := setup(t)
	ctx := context.Background()
	l := newLocker(Config{Owner: "W"})
	lease, err := l.Acquire(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if !l.CanReleaseInWrite(lease) {
		t.Fatal("CanReleaseInWrite = false with nobody waiting, want true")
	}
	got := make(chan *Lease)
	go func() {
		next, err := l.Acquire(ctx, "a")
		if err != nil {
			t.Error(err)
		}
		got <- next
	}()
	waitQueued(t, l, "a", 1)
	if !l.CanReleaseInWrite(lease) { // no hand-off configured: the waiter acquires anew
		t.Error("CanReleaseInWrite = false without MaxHold, want true")
	}
	res, err := coll.UpdateOne(ctx, lease.Fence(), bson.D{
		{Key: "$inc", Value: bson.D{{Key: "n", Value: int64(1)}}},
		{Key: "$unset", Value: ReleaseFields()},
	})
	if err != nil || res.ModifiedCount != 1 {
		t.Fatalf("fenced write with release: %v, %+v", err, res)
	}
	l.ReleasedByWrite(lease)
	next := <-got
	if next == nil || next.Token != lease.Token+1 || next.HandOffs != 0 {
		t.Fatalf("waiter got %+v, want a fresh lease with token %d", next, lease.Token+1)
	}
	// The old holder's late calls must not touch the new holder's lease or turn.
	l.Drop(lease)
	if err := l.Release(ctx, lease); err != nil {
		t.Errorf("Release after ReleasedByWrite: %v, want nil (no-op)", err)
	}
	if l.CanReleaseInWrite(lease) {
		t.Error("CanReleaseInWrite on a released lease = true, want false")
	}
	if err := l.Renew(ctx, next); err != nil {
		t.Errorf("new holder lost its lease to the old holder's calls: %v", err)
	}
	if _, err := l.TryAcquire(ctx, "a"); !errors.Is(err, ErrHeld) {
		t.Errorf("TryAcquire while the new holder has the turn: %v, want ErrHeld", err)
	}
	if err := l.Release(ctx, next); err != nil {
		t.Fatal(err)
	}
}

// TestCanReleaseInWriteDefersToHandOff: with MaxHold and a local waiter, the
// hand-off is cheaper than a release in the write, so the holder keeps it.
func TestCanReleaseInWriteDefersToHandOff(t *testing.T) {
	_, newLocker := setup(t)
	ctx := context.Background()
	l := newLocker(Config{Owner: "H", MaxHold: time.Second})
	lease, err := l.Acquire(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	if !l.CanReleaseInWrite(lease) {
		t.Fatal("CanReleaseInWrite = false with nobody waiting, want true")
	}
	got := make(chan *Lease)
	go func() {
		next, err := l.Acquire(ctx, "b")
		if err != nil {
			t.Error(err)
		}
		got <- next
	}()
	waitQueued(t, l, "b", 1)
	if l.CanReleaseInWrite(lease) {
		t.Error("CanReleaseInWrite = true with a local waiter and MaxHold, want false")
	}
	if err := l.Release(ctx, lease); err != nil {
		t.Fatal(err)
	}
	next := <-got
	if next.Token != lease.Token || next.HandOffs != 1 {
		t.Fatalf("hand-off gave token %d hand-offs %d, want %d, 1", next.Token, next.HandOffs, lease.Token)
	}
	// The previous holder's second Release must not hand off or release again.
	if err := l.Release(ctx, lease); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("second Release: %v, want ErrLeaseLost", err)
	}
	if err := l.Renew(ctx, next); err != nil {
		t.Errorf("new holder lost its lease to the old holder's second Release: %v", err)
	}
	if err := l.Release(ctx, next); err != nil {
		t.Fatal(err)
	}
}
