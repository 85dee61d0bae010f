package account

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/mongo"
)

// CreateWithID inserts a customer account with a caller-chosen id (the HTTP layer derives it
// from the request's idempotency record). Creating the same id again with the same owner and
// currency returns the existing account, so a re-run after a crash never makes a second one.
func (s *Store) CreateWithID(ctx context.Context, id, owner string, c Currency) (*Account, error) {
	a, err := New(owner, c, s.now())
	if err != nil {
		return nil, err
	}
	a.ID = id
	if err := a.Validate(); err != nil {
		return nil, err
	}
	_, err = s.coll.InsertOne(ctx, a)
	if err == nil {
		return a, nil
	}
	if !mongo.IsDuplicateKeyError(err) {
		return nil, fmt.Errorf("insert account: %w", err)
	}
	existing, gerr := s.Get(ctx, id)
	if gerr != nil {
		return nil, gerr
	}
	if existing.Owner != owner || existing.Currency != c || existing.Kind != KindCustomer {
		return nil, fmt.Errorf("%w: id %s already names another account", ErrInvalid, id)
	}
	return existing, nil
}
