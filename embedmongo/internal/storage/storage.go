// Package storage holds the engine's databases, collections, documents and indexes, in memory
// and, with a data directory, durably on disk.
package storage

import (
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// Options configures a Store.
type Options struct {
	Dir string // "" keeps everything in memory
}

// Store is the whole data set of one engine.
type Store struct{}

// Open opens (or creates) a store. A data dir held by another live process gives a clear error.
func Open(opts Options) (*Store, error) { return &Store{}, nil }

// Close flushes and closes the store.
func (s *Store) Close() error { return nil }

// DatabaseInfo describes a database for listDatabases.
type DatabaseInfo struct {
	Name       string
	SizeOnDisk int64
	Empty      bool
}

// CollectionInfo describes a collection for listCollections.
type CollectionInfo struct {
	Name    string
	Options bson.D // as given to create (capped, validator, ...)
	UUID    bson.Binary
}

// IndexSpec is an index definition; Spec is the full document as listIndexes shows it
// ({v: 2, key: {...}, name: "...", unique: true, ...}).
type IndexSpec struct {
	Name                    string
	Key                     bson.D
	Unique                  bool
	Sparse                  bool
	ExpireAfterSeconds      *int64
	PartialFilterExpression bson.D
	Spec                    bson.D
}

// RecordID identifies a stored document; ids increase in insertion order (natural order).
type RecordID int64

// Doc is a stored document with its record id.
type Doc struct {
	ID  RecordID
	Doc bson.D
}

// MatchFunc decides whether a candidate document belongs to the result.
type MatchFunc func(bson.D) (bool, error)

// ListDatabases lists databases that have at least one collection.
func (s *Store) ListDatabases() []DatabaseInfo { return nil }

// ListCollections lists the collections of db.
func (s *Store) ListCollections(db string) []CollectionInfo { return nil }

// CreateCollection creates db.name; NamespaceExists (48) when it exists.
func (s *Store) CreateCollection(db, name string, options bson.D) error { return nil }

// Collection returns db.name, or nil when it does not exist.
func (s *Store) Collection(db, name string) *Collection { return nil }

// CollectionOrCreate returns db.name, creating it (with its _id index) when absent, as writes do.
func (s *Store) CollectionOrCreate(db, name string) (*Collection, error) { return nil, nil }

// DropCollection drops db.name; reports whether it existed.
func (s *Store) DropCollection(db, name string) (bool, error) { return false, nil }

// DropDatabase drops every collection of db.
func (s *Store) DropDatabase(db string) error { return nil }

// ExpireTTL deletes documents past their TTL index expiry as of now; returns how many.
func (s *Store) ExpireTTL(now time.Time) (int, error) { return 0, nil }

// Collection is one collection's documents and indexes.
type Collection struct{}

// Count returns the number of documents.
func (c *Collection) Count() int64 { return 0 }

// DataSize returns the total BSON size of the documents.
func (c *Collection) DataSize() int64 { return 0 }

// Indexes lists the index definitions (the _id index first).
func (c *Collection) Indexes() []IndexSpec { return nil }

// CreateIndexes adds indexes; returns how many were new. Existing identical ones are no-ops;
// same name with different options is IndexOptionsConflict (85) / IndexKeySpecsConflict (86);
// building a unique index over duplicates is DuplicateKey (11000).
func (c *Collection) CreateIndexes(specs []IndexSpec) (int, error) { return 0, nil }

// DropIndex drops an index by name ("*" drops all but _id); IndexNotFound (27) when absent.
func (c *Collection) DropIndex(name string) error { return nil }

// Find returns the documents matching filter (candidates narrowed by an index when the filter
// allows, then confirmed by match), in natural order, as copies the caller owns.
func (c *Collection) Find(filter bson.D, match MatchFunc) ([]Doc, error) {
	return nil, mongoerr.New(mongoerr.NotImplemented, "storage: not implemented yet")
}

// Write runs fn with the collection locked against other writers: each Tx operation is applied
// at once (atomically per document, as in mongod) and the whole batch is made durable before
// Write returns. On a storage failure the batch is rolled back and an error is returned, so
// nothing unstored is ever acknowledged.
func (c *Collection) Write(fn func(tx *Tx) error) error { return fn(&Tx{}) }

// Tx is a write in progress on one collection.
type Tx struct{}

// Find is Collection.Find within the write (sees the transaction's own changes).
func (tx *Tx) Find(filter bson.D, match MatchFunc) ([]Doc, error) { return nil, nil }

// Insert stores a new document (which must have an _id); DuplicateKey (11000) with keyPattern
// and keyValue on a unique index violation.
func (tx *Tx) Insert(doc bson.D) (RecordID, error) { return 0, nil }

// Replace replaces the document with record id; unique index violations as for Insert.
func (tx *Tx) Replace(id RecordID, doc bson.D) error { return nil }

// Delete removes the document with record id.
func (tx *Tx) Delete(id RecordID) error { return nil }
