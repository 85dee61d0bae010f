package account

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// CollectionName is the collection that holds accounts.
const CollectionName = "accounts"

// Store reads and creates accounts in MongoDB. Balances are written only by
// package transaction, under a lease; Store never touches them.
type Store struct {
	coll *mongo.Collection
	now  func() time.Time
}

// NewStore returns a Store on db's accounts collection. now may be nil (time.Now).
func NewStore(db *mongo.Database, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{coll: db.Collection(CollectionName), now: now}
}

// Collection is the underlying collection (the lock package leases its documents).
func (s *Store) Collection() *mongo.Collection { return s.coll }

// EnsureIndexes creates the indexes accounts need. It is idempotent.
func (s *Store) EnsureIndexes(ctx context.Context) error {
	_, err := s.coll.Indexes().CreateOne(ctx, mongo.IndexModel{
		Keys:    bson.D{{Key: "owner", Value: 1}},
		Options: options.Index().SetName("owner_1"),
	})
	return err
}

// Create inserts a new customer account.
func (s *Store) Create(ctx context.Context, owner string, c Currency) (*Account, error) {
	a, err := New(owner, c, s.now())
	if err != nil {
		return nil, err
	}
	if _, err := s.coll.InsertOne(ctx, a); err != nil {
		return nil, fmt.Errorf("insert account: %w", err)
	}
	return a, nil
}

// EnsureExternal creates the external account of currency c if it does not
// exist yet, and returns it. Safe to call concurrently from many instances.
func (s *Store) EnsureExternal(ctx context.Context, c Currency) (*Account, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	a := NewExternal(c, s.now())
	_, err := s.coll.UpdateOne(ctx,
		bson.D{{Key: "_id", Value: a.ID}},
		bson.D{{Key: "$setOnInsert", Value: bson.D{
			{Key: "owner", Value: a.Owner},
			{Key: "currency", Value: a.Currency},
			{Key: "balance", Value: int64(0)},
			{Key: "status", Value: a.Status},
			{Key: "kind", Value: a.Kind},
			{Key: "createdAt", Value: a.CreatedAt},
			{Key: "updatedAt", Value: a.UpdatedAt},
		}}},
		options.UpdateOne().SetUpsert(true))
	// Two instances upserting at once: one may lose with a duplicate key; the account exists.
	if err != nil && !mongo.IsDuplicateKeyError(err) {
		return nil, fmt.Errorf("ensure external account: %w", err)
	}
	return s.Get(ctx, a.ID)
}

// Get returns the account with the given id, or an error wrapping ErrNotFound.
func (s *Store) Get(ctx context.Context, id string) (*Account, error) {
	var a Account
	err := s.coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&a)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return nil, fmt.Errorf("get account: %w", err)
	}
	return &a, nil
}

// GetMany returns the accounts with the given ids that exist, keyed by id.
func (s *Store) GetMany(ctx context.Context, ids ...string) (map[string]*Account, error) {
	cur, err := s.coll.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}})
	if err != nil {
		return nil, fmt.Errorf("get accounts: %w", err)
	}
	var all []*Account
	if err := cur.All(ctx, &all); err != nil {
		return nil, fmt.Errorf("get accounts: %w", err)
	}
	m := make(map[string]*Account, len(all))
	for _, a := range all {
		m[a.ID] = a
	}
	return m, nil
}

// SetStatus changes an account's status (freeze, close, reactivate). A
// transfer already holding the account's lease finishes; later ones are refused.
func (s *Store) SetStatus(ctx context.Context, id string, st Status) error {
	if err := st.Validate(); err != nil {
		return err
	}
	res, err := s.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "kind", Value: KindCustomer}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "status", Value: st}, {Key: "updatedAt", Value: s.now().UTC()}}}})
	if err != nil {
		return fmt.Errorf("set account status: %w", err)
	}
	if res.MatchedCount == 0 {
		return fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return nil
}

// Each calls fn for every account, in id order, until fn returns an error.
func (s *Store) Each(ctx context.Context, fn func(*Account) error) error {
	cur, err := s.coll.Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return fmt.Errorf("list accounts: %w", err)
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		var a Account
		if err := cur.Decode(&a); err != nil {
			return fmt.Errorf("decode account: %w", err)
		}
		if err := fn(&a); err != nil {
			return err
		}
	}
	return cur.Err()
}
