package transaction

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/bankd/bankd/account"
	"github.com/bankd/bankd/lock"
)

// CollectionName is the collection that journals transfers.
const CollectionName = "transfers"

// markers is the account field listing transfers with a leg applied to the
// account and not yet cleaned up.
const markers = "pendingTransfers"

// New returns a Service on db: accounts in "accounts", the journal in "transfers".
func New(db *mongo.Database, cfg Config) (*Service, error) {
	cfg = cfg.withDefaults()
	accounts := account.NewStore(db, cfg.Now)
	accLocks, err := lock.New(accounts.Collection(), cfg.Lock)
	if err != nil {
		return nil, err
	}
	cfg.Lock = accLocks.Config() // one owner id for both lockers
	xcfg := cfg.Lock
	xcfg.MaxHold = 0 // a transfer's lease has one user at a time
	xferLocks, err := lock.New(db.Collection(CollectionName), xcfg)
	if err != nil {
		return nil, err
	}
	if cfg.RecoveryGrace <= 0 {
		cfg.RecoveryGrace = cfg.Lock.LeaseDuration
	}
	return newService(&store{coll: db.Collection(CollectionName), accounts: accounts.Collection()},
		accounts, accLocks, xferLocks, cfg), nil
}

// EnsureIndexes creates the indexes of accounts and transfers. Idempotent.
func (s *Service) EnsureIndexes(ctx context.Context) error {
	if err := s.accounts.EnsureIndexes(ctx); err != nil {
		return err
	}
	_, err := s.store.coll.Indexes().CreateMany(ctx, []mongo.IndexModel{
		{ // an account's transfers, newest first
			Keys:    bson.D{{Key: "accounts", Value: 1}, {Key: "createdAt", Value: -1}, {Key: "_id", Value: -1}},
			Options: options.Index().SetName("accounts_1_createdAt_-1__id_-1"),
		},
		{ // recovery's scan for unfinished transfers
			Keys:    bson.D{{Key: "state", Value: 1}, {Key: "createdAt", Value: 1}},
			Options: options.Index().SetName("state_1_createdAt_1"),
		},
	})
	return err
}

type store struct {
	coll     *mongo.Collection // transfers
	accounts *mongo.Collection
}

// newFields is a new transfer document, less its _id.
func (st *store) newFields(t *Transfer) bson.D {
	d := bson.D{
		{Key: "kind", Value: t.Kind}, {Key: "from", Value: t.From}, {Key: "to", Value: t.To},
		{Key: "amount", Value: t.Amount}, {Key: "currency", Value: t.Currency},
	}
	if t.Reference != "" {
		d = append(d, bson.E{Key: "reference", Value: t.Reference})
	}
	return append(d,
		bson.E{Key: "state", Value: t.State}, bson.E{Key: "accounts", Value: t.Accounts},
		bson.E{Key: "createdAt", Value: t.CreatedAt}, bson.E{Key: "updatedAt", Value: t.UpdatedAt},
	)
}

func (st *store) decode(raw bson.Raw) (*Transfer, error) {
	var t Transfer
	if err := bson.Unmarshal(raw, &t); err != nil {
		return nil, fmt.Errorf("decode transfer: %w", err)
	}
	return &t, nil
}

func (st *store) get(ctx context.Context, id string) (*Transfer, error) {
	var t Transfer
	err := st.coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&t)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return nil, fmt.Errorf("get transfer %s: %w", id, err)
	}
	return &t, nil
}

// debit applies the source leg with its marker, fenced by the source's lease,
// releasing that lease in the same write when release is set (see
// Service.applyLegs for why that is safe). If nothing matched, a fresh read
// says why: lease lost, leg already applied (nil), or too little money.
// released reports whether this write released the lease.
func (st *store) debit(ctx context.Context, l *lock.Lease, t *Transfer, checkFunds, release bool) (released bool, err error) {
	filter := append(l.Fence(), bson.E{Key: markers, Value: bson.D{{Key: "$ne", Value: t.ID}}})
	if checkFunds {
		filter = append(filter, bson.E{Key: "balance", Value: bson.D{{Key: "$gte", Value: t.Amount}}})
	}
	released, applied, err := st.applyLeg(ctx, l, t.ID, filter, -t.Amount, release)
	if err != nil || applied {
		return released, err
	}
	if checkFunds {
		return false, ErrInsufficientFunds
	}
	return false, fmt.Errorf("debit %s for %s: refused for no known reason", l.Key, t.ID)
}

// credit applies the destination leg with its marker, fenced by its lease,
// releasing the lease in the same write when release is set.
func (st *store) credit(ctx context.Context, l *lock.Lease, t *Transfer, release bool) (released bool, err error) {
	filter := append(l.Fence(), bson.E{Key: markers, Value: bson.D{{Key: "$ne", Value: t.ID}}})
	released, applied, err := st.applyLeg(ctx, l, t.ID, filter, t.Amount, release)
	if err != nil || applied {
		return released, err
	}
	return false, fmt.Errorf("credit %s for %s: refused for no known reason", l.Key, t.ID)
}

// applyLeg adds delta to the balance and pushes the marker in one write,
// which also releases the lease if release is set. It reports whether the
// leg is applied (now or before) and whether this write released the lease
// (only if it matched: a leg found already applied leaves the lease held);
// applied false with a nil error means the filter's other conditions refused it.
func (st *store) applyLeg(ctx context.Context, l *lock.Lease, id string, filter bson.D, delta int64, release bool) (released, applied bool, err error) {
	update := bson.D{
		{Key: "$inc", Value: bson.D{{Key: "balance", Value: delta}}},
		{Key: "$push", Value: bson.D{{Key: markers, Value: id}}},
		{Key: "$currentDate", Value: bson.D{{Key: "updatedAt", Value: true}}},
	}
	if release {
		update = append(update, bson.E{Key: "$unset", Value: lock.ReleaseFields()})
	}
	res, err := st.accounts.UpdateOne(ctx, filter, update)
	if err != nil {
		return false, false, fmt.Errorf("apply %d to %s for %s: %w", delta, l.Key, id, err)
	}
	if res.MatchedCount == 1 {
		return release, true, nil
	}
	applied, err = st.hasMarker(ctx, l, id)
	return false, applied, err
}

// stillDriving confirms that tl still holds its transfer and that the transfer is pending,
// else ErrLeaseLost: another driver took it over and may have moved it on.
func (st *store) stillDriving(ctx context.Context, tl *lock.Lease) error {
	err := st.coll.FindOne(ctx, append(tl.Fence(), bson.E{Key: "state", Value: StatePending}),
		options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}})).Err()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return fmt.Errorf("transfer %s (token %d) is no longer this driver's to apply: %w", tl.Key, tl.Token, lock.ErrLeaseLost)
	}
	if err != nil {
		return fmt.Errorf("read transfer %s: %w", tl.Key, err)
	}
	return nil
}

// hasMarker reads the account afresh: whether transfer id's leg is on it,
// or ErrLeaseLost if l no longer holds it.
func (st *store) hasMarker(ctx context.Context, l *lock.Lease, id string) (bool, error) {
	var a struct {
		Owner   string   `bson:"lockOwner"`
		Token   int64    `bson:"fencingToken"`
		Markers []string `bson:"pendingTransfers"`
	}
	err := st.accounts.FindOne(ctx, bson.D{{Key: "_id", Value: l.Key}},
		options.FindOne().SetProjection(bson.D{{Key: lock.FieldOwner, Value: 1}, {Key: lock.FieldToken, Value: 1}, {Key: markers, Value: 1}})).Decode(&a)
	if err != nil {
		return false, fmt.Errorf("read account %s: %w", l.Key, err)
	}
	if a.Owner != l.Owner || a.Token != l.Token {
		return false, fmt.Errorf("account %s token %d (now %q/%d): %w", l.Key, l.Token, a.Owner, a.Token, lock.ErrLeaseLost)
	}
	return slices.Contains(a.Markers, id), nil
}

// removeMarkers pulls an applied transfer's markers off both accounts.
func (st *store) removeMarkers(ctx context.Context, t *Transfer) error {
	_, err := st.accounts.UpdateMany(ctx,
		bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: bson.A{t.From, t.To}}}}, {Key: markers, Value: t.ID}},
		bson.D{{Key: "$pull", Value: bson.D{{Key: markers, Value: t.ID}}}})
	if err != nil {
		return fmt.Errorf("clean up markers of %s: %w", t.ID, err)
	}
	return nil
}

// setState moves the transfer from state from to next, fenced by its lease;
// a terminal state releases the lease in the same write.
func (st *store) setState(ctx context.Context, l *lock.Lease, from, next State, reason Reason, now time.Time) error {
	stmt := stateStmt(l, from, next, reason, now)
	res, err := st.coll.UpdateOne(ctx, stmt.Filter, stmt.U)
	if err != nil {
		return fmt.Errorf("transfer %s %s→%s: %w", l.Key, from, next, err)
	}
	if res.MatchedCount == 0 {
		return fmt.Errorf("transfer %s %s→%s token %d: %w", l.Key, from, next, l.Token, lock.ErrLeaseLost)
	}
	return nil
}

// stale lists unfinished transfers created before cutoff whose lease is free
// or expired by the database clock: their driver is gone.
func (st *store) stale(ctx context.Context, cutoff time.Time, limit int64) ([]string, error) {
	filter := append(bson.D{
		{Key: "state", Value: bson.D{{Key: "$in", Value: bson.A{StatePending, StateApplied}}}},
		{Key: "createdAt", Value: bson.D{{Key: "$lt", Value: cutoff}}},
	}, lock.Available()...)
	cur, err := st.coll.Find(ctx, filter, options.Find().
		SetProjection(bson.D{{Key: "_id", Value: 1}}).
		SetSort(bson.D{{Key: "createdAt", Value: 1}}).SetLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("find stale transfers: %w", err)
	}
	var docs []struct {
		ID string `bson:"_id"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("find stale transfers: %w", err)
	}
	ids := make([]string, len(docs))
	for i, d := range docs {
		ids[i] = d.ID
	}
	return ids, nil
}

// page reads up to limit transfers of an account, newest first, strictly
// after the position c (nil: from the newest).
func (st *store) page(ctx context.Context, accountID string, c *cursor, limit int64) ([]*Transfer, error) {
	filter := bson.D{{Key: "accounts", Value: accountID}}
	if c != nil {
		at := time.UnixMilli(c.CreatedMS).UTC()
		filter = append(filter, bson.E{Key: "$or", Value: bson.A{
			bson.D{{Key: "createdAt", Value: bson.D{{Key: "$lt", Value: at}}}},
			bson.D{{Key: "createdAt", Value: at}, {Key: "_id", Value: bson.D{{Key: "$lt", Value: c.ID}}}},
		}})
	}
	cur, err := st.coll.Find(ctx, filter, options.Find().
		SetSort(bson.D{{Key: "createdAt", Value: -1}, {Key: "_id", Value: -1}}).SetLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("list transfers of %s: %w", accountID, err)
	}
	var ts []*Transfer
	if err := cur.All(ctx, &ts); err != nil {
		return nil, fmt.Errorf("list transfers of %s: %w", accountID, err)
	}
	return ts, nil
}

// each streams every transfer (audit).
func (st *store) each(ctx context.Context, fn func(*Transfer) error) error {
	cur, err := st.coll.Find(ctx, bson.D{}, options.Find().SetProjection(bson.D{
		{Key: "from", Value: 1}, {Key: "to", Value: 1}, {Key: "amount", Value: 1},
		{Key: "currency", Value: 1}, {Key: "state", Value: 1},
	}))
	if err != nil {
		return fmt.Errorf("read transfers: %w", err)
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		var t Transfer
		if err := cur.Decode(&t); err != nil {
			return fmt.Errorf("decode transfer: %w", err)
		}
		if err := fn(&t); err != nil {
			return err
		}
	}
	return cur.Err()
}
