package storage

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// OptionsRef returns the collection's current options (validator, collation, viewOn, ...)
// without copying. collMod replaces the options document wholesale and never modifies one in
// place, so the result stays valid; callers must not modify it.
func (c *Collection) OptionsRef() bson.D {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.options
}

// SetOptions durably replaces the collection's options, as collMod does.
func (c *Collection) SetOptions(options bson.D) error {
	s := c.store
	// s.mu guards the options' readers in ListCollections; the lock order is s.mu, then c.mu.
	s.mu.Lock()
	defer s.mu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || s.closed {
		return errShutdown()
	}
	if c.dropped {
		return mongoerr.New(mongoerr.NamespaceNotFound, "ns does not exist: %s.%s", c.db, c.name)
	}
	if err := s.checkWritable(); err != nil {
		return err
	}
	prev := c.options
	c.options = cloneD(options)
	if err := s.persistCatalog(c); err != nil {
		c.options = prev
		return err
	}
	return nil
}
