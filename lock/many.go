package lock

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/bankd/bankd/internal/bulk"
)

// ErrExists: InsertMany found a document with that key already (or a goroutine of this
// process working on it): the caller goes the AcquireOrInsert way for it.
var ErrExists = fmt.Errorf("lock: document exists: %w", ErrHeld)

// InsertMany creates a document for each keys[i] (fields[i] plus _id and a lease held by this
// Locker) in one round trip, and holds each new one as AcquireOrInsert holds a document it
// inserted (Lease.Created, token 1). A key whose document exists, or that a goroutine of this
// process holds or waits for, gets ErrExists and is left untouched; other failures come back
// per key too. Leases and errors are returned in the order of keys.
func (l *Locker) InsertMany(ctx context.Context, keys []string, fields []bson.D) ([]*Lease, []error) {
	leases, errs := make([]*Lease, len(keys)), make([]error, len(keys))
	var idx []int // positions of keys whose local turn we hold
	for i, k := range keys {
		if l.q.tryEnter(k) {
			idx = append(idx, i)
		} else {
			errs[i] = ErrExists
		}
	}
	for lo := 0; lo < len(idx); lo += bulk.MaxStatements {
		part := idx[lo:min(lo+bulk.MaxStatements, len(idx))]
		pk, pf := make([]string, len(part)), make([]bson.D, len(part))
		for j, i := range part {
			pk[j], pf[j] = keys[i], fields[i]
		}
		ls, es := l.st.insertMany(ctx, pk, l.cfg.Owner, l.cfg.LeaseDuration, pf)
		for j, i := range part {
			leases[i], errs[i] = ls[j], es[j]
			if es[j] != nil {
				l.q.leave(keys[i])
			}
		}
	}
	return leases, errs
}

// insertMany sends one upsert per key whose filter no existing document can match (a stored
// document always has FieldToken), so each statement either inserts a new, leased document or
// fails with a duplicate key error: an existing document is never touched. The lease is taken
// by the database clock, as acquire does (LeaseOps).
func (s *mongoStore) insertMany(ctx context.Context, keys []string, owner string, d time.Duration, fields []bson.D) ([]*Lease, []error) {
	leases, errs := make([]*Lease, len(keys)), make([]error, len(keys))
	stmts := make([]bulk.Update, len(keys))
	docs := make([][]byte, len(keys))
	for i, k := range keys {
		stmts[i] = bulk.Update{
			Filter: bson.D{{Key: "_id", Value: k}, {Key: FieldToken, Value: bson.D{{Key: "$exists", Value: false}}}},
			U:      append(bson.D{{Key: "$setOnInsert", Value: fields[i]}}, LeaseOps(owner, d, "")...),
			Upsert: true,
		}
		doc, err := bson.Marshal(append(bson.D{{Key: "_id", Value: k}}, fields[i]...))
		if err != nil {
			errs[i] = err
			stmts[i].Filter = nil
		}
		docs[i] = doc
	}
	// Statements whose document could not be built are left out.
	send, at := stmts[:0:0], []int{}
	for i, st := range stmts {
		if st.Filter != nil {
			send, at = append(send, st), append(at, i)
		}
	}
	start := s.localNow()
	res, err := bulk.UpdateMany(ctx, s.coll, send)
	for j, i := range at {
		switch we, failed := res.Errors[j]; {
		case err != nil:
			errs[i] = fmt.Errorf("lease %s: %w", keys[i], err)
		case failed && isDuplicateKey(we.Code):
			errs[i] = ErrExists
		case failed:
			errs[i] = fmt.Errorf("lease %s: %w", keys[i], mongo.WriteException{WriteErrors: []mongo.WriteError{we}})
		case res.Upserted[j]:
			leases[i] = &Lease{Key: keys[i], Owner: owner, Token: 1, Duration: d, Doc: docs[i], Created: true, start: start}
		default: // matched an existing document: the filter forbids it
			errs[i] = fmt.Errorf("lease %s: insert matched an existing document", keys[i])
		}
	}
	return leases, errs
}

// isDuplicateKey reports a duplicate key error code (11000, and its legacy forms).
func isDuplicateKey(code int) bool { return code == 11000 || code == 11001 || code == 12582 }

// AcquireMany takes, without waiting, the leases of those of keys' documents that are free
// right now: a key held here or elsewhere, or without a document, is left out of the map.
//
// The documents are taken by one update of all of them (multi): per document the same
// conditional update as Acquire's findOneAndUpdate (the filter admitting only a free or
// expired lease by the database clock, the update writing owner, the database's time,
// duration and token + 1, as operators: LeaseOps), each document atomically on its own. The
// update also writes a fresh acquisition id, by which one read then returns exactly the
// documents this command leased, with their tokens: two round trips and one statement for any
// number of leases, which is what lets a batch of transfers lease its accounts cheaply.
//
// also, if not empty, holds more update operators, on fields other than the lease's, for
// every document: applied in the same write as its lease, so only where the lease is taken.
func (l *Locker) AcquireMany(ctx context.Context, keys []string, also bson.D) map[string]*Lease {
	var mine []string
	for _, k := range keys {
		if l.q.tryEnter(k) {
			mine = append(mine, k)
		}
	}
	got := map[string]*Lease{}
	for lo := 0; lo < len(mine); lo += bulk.MaxStatements {
		part := mine[lo:min(lo+bulk.MaxStatements, len(mine))]
		for k, lease := range l.st.acquireMany(ctx, part, l.cfg.Owner, l.cfg.LeaseDuration, also) {
			got[k] = lease
		}
	}
	for _, k := range mine {
		if got[k] == nil {
			l.q.leave(k)
		}
	}
	return got
}

func (s *mongoStore) acquireMany(ctx context.Context, keys []string, owner string, d time.Duration, also bson.D) map[string]*Lease {
	id := uuid.NewString()
	u := LeaseOps(owner, d, id)
	if len(also) > 0 {
		u = append(slices.Clip(u), also...)
	}
	filter := append(bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: keys}}}}, Available()...)
	start := s.localNow()
	got := map[string]*Lease{}
	// Even when the command fails (its outcome unknown), the read finds whatever it leased.
	res, err := s.coll.UpdateMany(ctx, filter, u)
	if err == nil && res.MatchedCount == 0 {
		return got
	}
	// All in the first reply: a server's default first batch (101 documents) would cost a
	// getMore round trip for every batch of more than 50 transfers.
	cur, err := s.coll.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: keys}}}, {Key: FieldAcquisition, Value: id}},
		options.Find().SetBatchSize(int32(len(keys))))
	if err != nil {
		return got // leased but unknown: those leases expire
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		raw := slices.Clone(cur.Current)
		key, ok := raw.Lookup("_id").StringValueOK()
		if !ok {
			continue
		}
		lease := &Lease{Key: key, Owner: owner, Duration: d, Doc: raw, start: start}
		if readLease(raw, lease) == nil {
			got[key] = lease
		}
	}
	return got
}
