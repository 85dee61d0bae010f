package lock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// New returns a Locker for the documents of coll.
func New(coll *mongo.Collection, cfg Config) (*Locker, error) {
	return newLocker(&mongoStore{coll: coll, now: cfg.Now}, coll.Name(), cfg)
}

type mongoStore struct {
	coll *mongo.Collection
	now  func() time.Time // local clock: only for Lease.start
}

func (s *mongoStore) localNow() time.Time {
	if s.now == nil {
		return time.Now()
	}
	return s.now()
}

// Available is the filter part admitting a document whose lease is free: never
// taken, released, or expired by the database's clock ($$NOW), so that
// instances with skewed clocks cannot take a live lease.
func Available() bson.D {
	return bson.D{{Key: "$or", Value: bson.A{
		bson.D{{Key: FieldOwner, Value: nil}},
		bson.D{{Key: "$expr", Value: bson.D{{Key: "$lte", Value: bson.A{
			bson.D{{Key: "$add", Value: bson.A{"$" + FieldTimestamp, "$" + FieldDuration}}},
			"$$NOW",
		}}}}},
	}}}
}

func (s *mongoStore) acquire(ctx context.Context, key, owner string, d time.Duration, checkExists bool) (*Lease, error) {
	filter := append(bson.D{{Key: "_id", Value: key}}, Available()...)
	update := mongo.Pipeline{{{Key: "$set", Value: leaseSet(owner, d)}}}
	start := s.localNow()
	raw, err := s.coll.FindOneAndUpdate(ctx, filter, update,
		options.FindOneAndUpdate().SetReturnDocument(options.After)).Raw()
	if errors.Is(err, mongo.ErrNoDocuments) {
		if checkExists {
			n, cerr := s.coll.CountDocuments(ctx, bson.D{{Key: "_id", Value: key}}, options.Count().SetLimit(1))
			if cerr != nil {
				return nil, fmt.Errorf("lease %s: %w", key, cerr)
			}
			if n == 0 {
				return nil, fmt.Errorf("lease %s: %w", key, ErrNotFound)
			}
		}
		return nil, ErrHeld
	}
	if err != nil {
		return nil, fmt.Errorf("lease %s: %w", key, err)
	}
	lease := &Lease{Key: key, Owner: owner, Duration: d, Doc: raw, start: start}
	if err := readLease(raw, lease); err != nil {
		return nil, fmt.Errorf("lease %s: %w", key, err)
	}
	return lease, nil
}

// LeaseOps is the lease write of leaseSet as update operators instead of a pipeline: the
// owner, the database's current time ($currentDate, the clock $$NOW reads), the duration,
// the token + 1 ($inc: 1 on a new document), and acq as the acquisition id ("" for none).
// Batched writes use it: operators need no expression compiled per statement, and other
// operators on other fields ($pull, $setOnInsert) can share the write.
func LeaseOps(owner string, d time.Duration, acq string) bson.D {
	set := bson.D{{Key: FieldOwner, Value: owner}, {Key: FieldDuration, Value: d.Milliseconds()}}
	if acq != "" {
		set = append(set, bson.E{Key: FieldAcquisition, Value: acq})
	}
	ops := bson.D{
		{Key: "$set", Value: set},
		{Key: "$currentDate", Value: bson.D{{Key: FieldTimestamp, Value: true}}},
		{Key: "$inc", Value: bson.D{{Key: FieldToken, Value: int64(1)}}},
	}
	if acq == "" {
		ops = append(ops, bson.E{Key: "$unset", Value: bson.D{{Key: FieldAcquisition, Value: ""}}})
	}
	return ops
}

// LeaseSet is the $set stage content of a pipeline update that takes the
// lease for owner: lockTimestamp from the database clock, token + 1.
func LeaseSet(owner string, d time.Duration) bson.D { return leaseSet(owner, d) }

func leaseSet(owner string, d time.Duration) bson.D {
	return bson.D{
		{Key: FieldOwner, Value: bson.D{{Key: "$literal", Value: owner}}},
		{Key: FieldTimestamp, Value: "$$NOW"},
		{Key: FieldDuration, Value: d.Milliseconds()},
		{Key: FieldToken, Value: bson.D{{Key: "$add", Value: bson.A{
			bson.D{{Key: "$ifNull", Value: bson.A{"$" + FieldToken, int64(0)}}}, int64(1),
		}}}},
		{Key: FieldAcquisition, Value: "$$REMOVE"},
	}
}

// readLease fills Token and Since from a leased document.
func readLease(raw bson.Raw, l *Lease) error {
	tok, ok := raw.Lookup(FieldToken).AsInt64OK()
	if !ok {
		return fmt.Errorf("document has no numeric %s", FieldToken)
	}
	since, ok := raw.Lookup(FieldTimestamp).TimeOK()
	if !ok {
		return fmt.Errorf("document has no date %s", FieldTimestamp)
	}
	l.Token, l.Since = tok, since
	return nil
}

func (s *mongoStore) renew(ctx context.Context, l *Lease) error {
	update := mongo.Pipeline{{{Key: "$set", Value: bson.D{
		{Key: FieldTimestamp, Value: "$$NOW"},
		{Key: FieldDuration, Value: l.Duration.Milliseconds()},
	}}}}
	start := s.localNow()
	raw, err := s.coll.FindOneAndUpdate(ctx, l.Fence(), update,
		options.FindOneAndUpdate().SetReturnDocument(options.After).
			SetProjection(bson.D{{Key: FieldToken, Value: 1}, {Key: FieldTimestamp, Value: 1}})).Raw()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return fmt.Errorf("renew %s token %d: %w", l.Key, l.Token, ErrLeaseLost)
	}
	if err != nil {
		return fmt.Errorf("renew %s: %w", l.Key, err)
	}
	l.start = start
	return readLease(raw, l)
}

func (s *mongoStore) release(ctx context.Context, l *Lease) error {
	res, err := s.coll.UpdateOne(ctx, l.Fence(), bson.D{{Key: "$unset", Value: ReleaseFields()}})
	if err != nil {
		return fmt.Errorf("release %s: %w", l.Key, err)
	}
	if res.MatchedCount == 0 {
		return fmt.Errorf("release %s token %d: %w", l.Key, l.Token, ErrLeaseLost)
	}
	return nil
}

// acquireOrInsert upserts with the filter {_id: key, lockOwner: null}: it
// matches an existing document whose lease is free, or inserts one. The
// pipeline keeps every existing field ($ifNull) and adds fields only to a
// new document. When the document exists and is leased, the upsert tries to
// insert a second document with the same _id and the server answers
// DuplicateKey; the lease may have expired, which a plain acquire then
// checks. (MongoDB refuses $expr in an upsert's filter, so the expiry test
// cannot be part of the upsert.) The pre-image tells a new document (none)
// from an existing one, whose token we then know is +1.
func (s *mongoStore) acquireOrInsert(ctx context.Context, key, owner string, d time.Duration, fields bson.D) (*Lease, error) {
	filter := bson.D{{Key: "_id", Value: key}, {Key: FieldOwner, Value: nil}}
	set := make(bson.D, 0, len(fields)+4)
	for _, f := range fields {
		set = append(set, bson.E{Key: f.Key, Value: bson.D{{Key: "$ifNull", Value: bson.A{
			"$" + f.Key, bson.D{{Key: "$literal", Value: f.Value}},
		}}}})
	}
	set = append(set, leaseSet(owner, d)...)
	start := s.localNow()
	raw, err := s.coll.FindOneAndUpdate(ctx, filter, mongo.Pipeline{{{Key: "$set", Value: set}}},
		options.FindOneAndUpdate().SetUpsert(true).SetReturnDocument(options.Before)).Raw()
	switch {
	case errors.Is(err, mongo.ErrNoDocuments): // inserted
		doc, merr := bson.Marshal(append(bson.D{{Key: "_id", Value: key}}, fields...))
		if merr != nil {
			return nil, merr
		}
		return &Lease{Key: key, Owner: owner, Token: 1, Duration: d, Doc: doc, Created: true, start: start}, nil
	case mongo.IsDuplicateKeyError(err):
		return s.acquire(ctx, key, owner, d, false)
	case err != nil:
		return nil, fmt.Errorf("lease %s: %w", key, err)
	}
	prev, _ := raw.Lookup(FieldToken).AsInt64OK()
	return &Lease{Key: key, Owner: owner, Token: prev + 1, Duration: d, Doc: raw, start: start}, nil
}
