package transaction

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// MaxPageSize bounds List's limit.
const MaxPageSize = 100

// cursor is a position in an account's transfers, newest first: the last
// transfer of the previous page. Clients see it as an opaque string.
type cursor struct {
	CreatedMS int64  `json:"t"`
	ID        string `json:"i"`
}

func (c cursor) encode() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string) (*cursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	var c cursor
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil || c.ID == "" {
		return nil, fmt.Errorf("%w: malformed cursor", ErrInvalid)
	}
	return &c, nil
}

// List returns up to limit (1..MaxPageSize) transfers of an account, newest
// first, starting after the position after ("" for the newest). next is the
// cursor of the following page, "" on the last page.
func (s *Service) List(ctx context.Context, accountID string, limit int, after string) (page []*Transfer, next string, err error) {
	if limit < 1 || limit > MaxPageSize {
		return nil, "", fmt.Errorf("%w: limit must be 1 to %d", ErrInvalid, MaxPageSize)
	}
	var c *cursor
	if after != "" {
		if c, err = decodeCursor(after); err != nil {
			return nil, "", err
		}
	}
	// One more than asked tells whether there is a next page.
	ts, err := s.store.page(ctx, accountID, c, int64(limit)+1)
	if err != nil {
		return nil, "", err
	}
	if len(ts) > limit {
		ts = ts[:limit]
		last := ts[limit-1]
		next = cursor{CreatedMS: last.CreatedAt.UnixMilli(), ID: last.ID}.encode()
	}
	return ts, next, nil
}
