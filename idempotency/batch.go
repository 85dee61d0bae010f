package idempotency

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/bankd/bankd/internal/bulk"
	"github.com/bankd/bankd/lock"
)

// Most requests bring a new key and complete in time. Those two writes are
// grouped across concurrent requests (bulk.Group): one command creates the
// records of every new key that arrived meanwhile, one completes every
// record finished meanwhile. Anything else (a key seen before, a statement
// refused) goes the one-request way, which tells every case apart.

// errNotNew: the record exists; claim it the one-request way.
var errNotNew = errors.New("idempotency: record exists")

// batchTimeout bounds one grouped command.
const batchTimeout = 30 * time.Second

// createMany inserts new in-flight records leased to this instance, one
// statement each. A statement's filter matches no stored record (all have a
// fencing token), so an existing key fails with a duplicate _id and is left
// untouched.
func (s *Store) createMany(ctx context.Context, recs []*Record) []error {
	ctx, cancel := context.WithTimeout(ctx, batchTimeout)
	defer cancel()
	stmts := make([]bulk.Update, len(recs))
	for i, r := range recs {
		fields := bson.D{
			{Key: "scope", Value: r.Scope}, {Key: "key", Value: r.Key},
			{Key: "fingerprint", Value: r.Fingerprint}, {Key: "state", Value: StateInFlight},
			{Key: "resourceId", Value: r.ResourceID},
		}
		if len(r.Request) > 0 {
			fields = append(fields, bson.E{Key: "request", Value: r.Request})
		}
		fields = append(fields, bson.E{Key: "createdAt", Value: r.CreatedAt}, bson.E{Key: "expiresAt", Value: r.ExpiresAt})
		stmts[i] = bulk.Update{
			Filter: bson.D{{Key: "_id", Value: r.ID}, {Key: lock.FieldToken, Value: bson.D{{Key: "$exists", Value: false}}}},
			U:      append(bson.D{{Key: "$setOnInsert", Value: fields}}, lock.LeaseOps(s.cfg.Owner, s.cfg.LeaseDuration, "")...),
			Upsert: true,
		}
	}
	errs := make([]error, len(recs))
	res, err := bulk.UpdateMany(ctx, s.coll, stmts)
	for i := range recs {
		switch we, failed := res.Errors[i]; {
		case err != nil:
			errs[i] = fmt.Errorf("idempotency begin: %w", err)
		case failed && we.Code == 11000:
			errs[i] = errNotNew
		case failed:
			errs[i] = fmt.Errorf("idempotency begin: %w", mongo.WriteException{WriteErrors: []mongo.WriteError{we}})
		case !res.Upserted[i]:
			errs[i] = errNotNew
		}
	}
	return errs
}

type completion struct {
	r   *Record
	out Outcome
	now time.Time
	id  string // this attempt's own mark, to recognise its write when the reply did not say
}

func completeUpdate(c completion) bson.D {
	return bson.D{
		{Key: "$set", Value: bson.D{{Key: "state", Value: StateDone}, {Key: "outcome", Value: c.out}, {Key: "completedAt", Value: c.now}, {Key: "completion", Value: c.id}}},
		{Key: "$unset", Value: lock.ReleaseFields()},
	}
}

// completeMany completes records in one command. If the server does not
// account for every statement, each is settled on its own (completeOne).
func (s *Store) completeMany(ctx context.Context, cs []completion) []error {
	ctx, cancel := context.WithTimeout(ctx, batchTimeout)
	defer cancel()
	stmts := make([]bulk.Update, len(cs))
	for i, c := range cs {
		stmts[i] = bulk.Update{Filter: fence(c.r), U: completeUpdate(c)}
	}
	errs := make([]error, len(cs))
	res, err := bulk.UpdateMany(ctx, s.coll, stmts)
	if err == nil && res.OK(len(stmts)) {
		return errs
	}
	for i, c := range cs {
		errs[i] = s.completeOne(ctx, c)
	}
	return errs
}

// completeOne completes one record. Finding it done with this attempt's
// mark means the grouped command did it after all.
func (s *Store) completeOne(ctx context.Context, c completion) error {
	res, err := s.coll.UpdateOne(ctx, fence(c.r), completeUpdate(c))
	if err != nil {
		return fmt.Errorf("idempotency complete: %w", err)
	}
	if res.MatchedCount == 1 {
		return nil
	}
	var cur struct {
		State      State  `bson:"state"`
		Token      int64  `bson:"fencingToken"`
		Completion string `bson:"completion"`
	}
	err = s.coll.FindOne(ctx, bson.D{{Key: "_id", Value: c.r.ID}}).Decode(&cur)
	if err == nil && cur.State == StateDone && cur.Token == c.r.Token && cur.Completion == c.id {
		return nil
	}
	return fmt.Errorf("idempotency complete %q: %w", c.r.Key, ErrLeaseLost)
}
