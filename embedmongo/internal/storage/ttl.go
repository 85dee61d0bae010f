package storage

import (
	"math"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// ExpireTTL deletes documents past their TTL index expiry as of now; returns how many. A
// document expires when its indexed field is a date (or an array holding dates: the earliest
// counts) before now − expireAfterSeconds; other values never expire.
func (s *Store) ExpireTTL(now time.Time) (int, error) {
	total := 0
	for _, c := range s.snapshot() {
		n, err := c.expireTTL(now)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

func (c *Collection) hasTTL() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, ix := range c.indexes {
		if ix.spec.ExpireAfterSeconds != nil {
			return true
		}
	}
	return false
}

func (c *Collection) expireTTL(now time.Time) (int, error) {
	if !c.hasTTL() {
		return 0, nil
	}
	n := 0
	err := c.Write(func(tx *Tx) error {
		var ids []RecordID
		for _, ix := range c.indexes {
			if ix.spec.ExpireAfterSeconds == nil {
				continue
			}
			cutoff := bson.NewDateTimeFromTime(now.Add(-time.Duration(*ix.spec.ExpireAfterSeconds) * time.Second))
			// Any date key below the cutoff means the earliest date is below it too.
			ids = ix.lookupRange(&bound{v: bson.DateTime(math.MinInt64), incl: true}, &bound{v: cutoff}, ids)
		}
		seen := map[RecordID]bool{}
		for _, id := range ids {
			if seen[id] {
				continue
			}
			seen[id] = true
			if err := tx.Delete(id); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil && n == 0 {
		return 0, err
	}
	return n, err
}
