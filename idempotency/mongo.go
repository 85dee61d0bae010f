package idempotency

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/google/uuid"

	"github.com/bankd/bankd/internal/bulk"
	"github.com/bankd/bankd/lock"
)

// CollectionName is the collection of idempotency records.
const CollectionName = "idempotency"

// Store keeps idempotency records in MongoDB.
type Store struct {
	coll *mongo.Collection
	cfg  Config

	creates   bulk.Group[*Record, error]    // batch.go
	completes bulk.Group[completion, error] // batch.go
}

// New returns a Store on db.
func New(db *mongo.Database, cfg Config) *Store {
	s := &Store{coll: db.Collection(CollectionName), cfg: cfg.withDefaults()}
	s.creates.Run = s.createMany
	s.completes.Run = s.completeMany
	return s
}

// Config returns the effective configuration.
func (s *Store) Config() Config { return s.cfg }

// EnsureIndexes creates the TTL index that expires records and the index
// Settle scans. Idempotent.
func (s *Store) EnsureIndexes(ctx context.Context) error {
	_, err := s.coll.Indexes().CreateMany(ctx, []mongo.IndexModel{
		{Keys: bson.D{{Key: "expiresAt", Value: 1}}, Options: options.Index().SetName("expiresAt_ttl").SetExpireAfterSeconds(0)},
		{Keys: bson.D{{Key: "state", Value: 1}, {Key: "createdAt", Value: 1}}, Options: options.Index().SetName("state_1_createdAt_1")},
	})
	return err
}

func (s *Store) leaseSet() bson.D { return lock.LeaseSet(s.cfg.Owner, s.cfg.LeaseDuration) }

// Begin claims (scope, key) for a request, see the package documentation.
// It returns the record: Replay set when it is done (answer its Outcome),
// else the caller holds it in flight and must Complete or Release it.
func (s *Store) Begin(ctx context.Context, b Begin) (*Record, error) {
	if err := ValidateKey(b.Key); err != nil {
		return nil, err
	}
	rec := s.newRecord(b)
	err, waitErr := s.creates.Do(ctx, rec)
	switch {
	case waitErr != nil:
		return nil, fmt.Errorf("idempotency begin: %w", waitErr)
	case err == nil:
		return rec, nil
	case !errors.Is(err, errNotNew):
		return nil, err
	}
	for range 3 { // a record may expire between our two reads
		rec, err := s.claim(ctx, b)
		if err == nil || !errors.Is(err, errGone) {
			return rec, err
		}
	}
	return nil, fmt.Errorf("idempotency: record of key %q keeps disappearing", b.Key)
}

var errGone = errors.New("record gone")

// claim creates the record leased to us, or takes over an in-flight record
// of the same request whose lease is free, in one upsert. When the record
// exists but is leased, the upsert fails on the duplicate _id; then a
// take-over of an expired lease is tried (MongoDB refuses $expr in an
// upsert's filter, so it cannot be part of the upsert), and failing that a
// read tells the three remaining cases apart.
func (s *Store) claim(ctx context.Context, b Begin) (*Record, error) {
	rec := s.newRecord(b)
	same := bson.D{
		{Key: "_id", Value: rec.ID},
		{Key: "state", Value: StateInFlight},
		{Key: "fingerprint", Value: rec.Fingerprint},
	}
	set := bson.D{}
	for _, f := range []bson.E{
		{Key: "scope", Value: rec.Scope}, {Key: "key", Value: rec.Key},
		{Key: "resourceId", Value: rec.ResourceID}, {Key: "request", Value: rec.Request},
		{Key: "createdAt", Value: rec.CreatedAt}, {Key: "expiresAt", Value: rec.ExpiresAt},
	} {
		if f.Key == "request" && len(rec.Request) == 0 {
			continue
		}
		set = append(set, bson.E{Key: f.Key, Value: bson.D{{Key: "$ifNull", Value: bson.A{
			"$" + f.Key, bson.D{{Key: "$literal", Value: f.Value}}}}}})
	}
	set = append(set, s.leaseSet()...)
	var prev Record
	err := s.coll.FindOneAndUpdate(ctx, append(same, bson.E{Key: lock.FieldOwner, Value: nil}),
		mongo.Pipeline{{{Key: "$set", Value: set}}},
		options.FindOneAndUpdate().SetUpsert(true).SetReturnDocument(options.Before)).Decode(&prev)
	if mongo.IsDuplicateKeyError(err) { // exists, leased: expired?
		err = s.coll.FindOneAndUpdate(ctx, append(same, lock.Available()...),
			mongo.Pipeline{{{Key: "$set", Value: s.leaseSet()}}},
			options.FindOneAndUpdate().SetReturnDocument(options.Before)).Decode(&prev)
		if errors.Is(err, mongo.ErrNoDocuments) {
			return s.classify(ctx, rec.ID, b.Fingerprint)
		}
		if err == nil {
			prev.Owner, prev.Token, prev.TakenOver = s.cfg.Owner, prev.Token+1, true
			return &prev, nil
		}
	}
	switch {
	case errors.Is(err, mongo.ErrNoDocuments): // created
		return rec, nil
	case err == nil: // an abandoned in-flight record of the same request: taken over
		prev.Owner, prev.Token, prev.TakenOver = s.cfg.Owner, prev.Token+1, true
		return &prev, nil
	}
	if mongo.IsDuplicateKeyError(err) {
		return s.classify(ctx, rec.ID, b.Fingerprint)
	}
	return nil, fmt.Errorf("idempotency begin: %w", err)
}

// newRecord is the record Begin creates for a new key.
func (s *Store) newRecord(b Begin) *Record {
	now := s.cfg.Now().UTC().Truncate(time.Millisecond)
	return &Record{
		ID: recordID(b.Scope, b.Key), Scope: b.Scope, Key: b.Key, Fingerprint: b.Fingerprint,
		State: StateInFlight, ResourceID: uuid.NewString(), Request: b.Request,
		CreatedAt: now, ExpiresAt: now.Add(s.cfg.TTL), Owner: s.cfg.Owner, Token: 1,
	}
}

// classify explains why a record could not be claimed.
func (s *Store) classify(ctx context.Context, id, fingerprint string) (*Record, error) {
	var cur Record
	err := s.coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&cur)
	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
		return nil, errGone
	case err != nil:
		return nil, fmt.Errorf("idempotency begin: %w", err)
	case cur.Fingerprint != fingerprint:
		return nil, ErrKeyMismatch
	case cur.State == StateDone:
		cur.Replay = true
		return &cur, nil
	}
	return nil, ErrInFlight
}

func fence(r *Record) bson.D {
	return bson.D{{Key: "_id", Value: r.ID}, {Key: "state", Value: StateInFlight},
		{Key: lock.FieldOwner, Value: r.Owner}, {Key: lock.FieldToken, Value: r.Token}}
}

// Complete stores the outcome of a record the caller holds and marks it done.
func (s *Store) Complete(ctx context.Context, r *Record, out Outcome) error {
	c := completion{r: r, out: out, now: s.cfg.Now().UTC().Truncate(time.Millisecond), id: uuid.NewString()}
	err, waitErr := s.completes.Do(ctx, c)
	if waitErr != nil {
		return fmt.Errorf("idempotency complete: %w", waitErr)
	}
	if err != nil {
		return err
	}
	r.State, r.Outcome = StateDone, &out
	return nil
}

// Release gives up a record the caller holds without an outcome (a transient
// failure): it stays in flight, and the next retry takes it over at once.
func (s *Store) Release(ctx context.Context, r *Record) error {
	res, err := s.coll.UpdateOne(ctx, fence(r), bson.D{{Key: "$unset", Value: lock.ReleaseFields()}})
	if err != nil {
		return fmt.Errorf("idempotency release: %w", err)
	}
	if res.MatchedCount == 0 {
		return fmt.Errorf("idempotency release %q: %w", r.Key, ErrLeaseLost)
	}
	return nil
}

// Get returns the record of (scope, key), or nil if there is none.
func (s *Store) Get(ctx context.Context, scope, key string) (*Record, error) {
	var r Record
	err := s.coll.FindOne(ctx, bson.D{{Key: "_id", Value: recordID(scope, key)}}).Decode(&r)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("idempotency get: %w", err)
	}
	return &r, nil
}

// Settle takes over in-flight records older than SettleGrace whose lease is
// free or expired, re-runs each with replay (which must do the same work as
// the first run, e.g. the transfer with id rec.ResourceID) and completes it
// with the outcome. A record whose replay fails is released for a later try.
// It returns how many records it completed.
func (s *Store) Settle(ctx context.Context, replay func(context.Context, *Record) (Outcome, error)) (int, error) {
	filter := append(bson.D{
		{Key: "state", Value: StateInFlight},
		{Key: "createdAt", Value: bson.D{{Key: "$lt", Value: s.cfg.Now().Add(-s.cfg.SettleGrace)}}},
	}, lock.Available()...)
	cur, err := s.coll.Find(ctx, filter, options.Find().SetLimit(100).SetProjection(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return 0, fmt.Errorf("idempotency settle: %w", err)
	}
	var ids []struct {
		ID string `bson:"_id"`
	}
	if err := cur.All(ctx, &ids); err != nil {
		return 0, fmt.Errorf("idempotency settle: %w", err)
	}
	n := 0
	var errs []error
	for _, d := range ids {
		var r Record
		err := s.coll.FindOneAndUpdate(ctx,
			append(bson.D{{Key: "_id", Value: d.ID}, {Key: "state", Value: StateInFlight}}, lock.Available()...),
			mongo.Pipeline{{{Key: "$set", Value: s.leaseSet()}}},
			options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&r)
		if errors.Is(err, mongo.ErrNoDocuments) {
			continue // someone else settled or took it
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		r.TakenOver = true
		out, err := replay(ctx, &r)
		if err != nil {
			errs = append(errs, fmt.Errorf("settle %q: %w", r.Key, err))
			_ = s.Release(ctx, &r)
			continue
		}
		if err := s.Complete(ctx, &r, out); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}
