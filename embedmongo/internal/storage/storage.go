package storage

import (
	"crypto/rand"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// Options configures a Store.
type Options struct {
	Dir string // "" keeps everything in memory
	// FS is the file system Pebble uses under Dir (nil = the OS's); tests inject failures with it.
	FS vfs.FS
}

// Store is the whole data set of one engine.
type Store struct {
	opts Options
	db   *pebble.DB // nil when in memory

	syncing sync.WaitGroup // writes committed to Pebble and waiting for their fsync

	mu     sync.RWMutex // guards colls and closed; held for create/drop
	colls  map[nsKey]*Collection
	closed bool

	// failed is set once a durable write could not be made durable: from then on every write
	// fails, as mongod stops on a journal failure, so nothing unstored is acknowledged.
	failed atomic.Pointer[error]
}

type nsKey struct{ db, name string }

// Open opens (or creates) a store. A data dir held by another live process gives a clear error.
func Open(opts Options) (*Store, error) {
	s := &Store{opts: opts, colls: map[nsKey]*Collection{}}
	if opts.Dir == "" {
		return s, nil
	}
	if err := s.openDurable(); err != nil {
		return nil, err
	}
	return s, nil
}

// Close flushes and closes the store. Later operations fail with ShutdownInProgress.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	colls := make([]*Collection, 0, len(s.colls))
	for _, c := range s.colls {
		colls = append(colls, c)
	}
	s.mu.Unlock()
	// Wait for writes in progress: each holds its collection's lock until its batch is committed.
	for _, c := range colls {
		c.mu.Lock()
		c.closed = true
		c.mu.Unlock()
	}
	if s.db == nil {
		return nil
	}
	s.syncing.Wait()
	return s.closeDurable()
}

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

// ListDatabases lists databases that have at least one collection, sorted by name.
func (s *Store) ListDatabases() []DatabaseInfo {
	s.mu.RLock()
	sizes := map[string]int64{}
	for k, c := range s.colls {
		sizes[k.db] += c.DataSize()
	}
	s.mu.RUnlock()
	out := make([]DatabaseInfo, 0, len(sizes))
	for name, size := range sizes {
		out = append(out, DatabaseInfo{Name: name, SizeOnDisk: size})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ListCollections lists the collections of db, sorted by name.
func (s *Store) ListCollections(db string) []CollectionInfo {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []CollectionInfo
	for k, c := range s.colls {
		if k.db == db {
			out = append(out, CollectionInfo{
				Name:    k.name,
				Options: cloneD(c.options),
				UUID:    bson.Binary{Subtype: 4, Data: append([]byte(nil), c.uuid[:]...)},
			})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// CreateCollection creates db.name; NamespaceExists (48) when it exists.
func (s *Store) CreateCollection(db, name string, options bson.D) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkOpen(); err != nil {
		return err
	}
	if _, ok := s.colls[nsKey{db, name}]; ok {
		return mongoerr.New(mongoerr.NamespaceExists, "Collection %s.%s already exists.", db, name)
	}
	_, err := s.createLocked(db, name, options)
	return err
}

// Collection returns db.name, or nil when it does not exist.
func (s *Store) Collection(db, name string) *Collection {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.colls[nsKey{db, name}]
}

// CollectionOrCreate returns db.name, creating it (with its _id index) when absent, as writes do.
func (s *Store) CollectionOrCreate(db, name string) (*Collection, error) {
	if c := s.Collection(db, name); c != nil {
		return c, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	if c, ok := s.colls[nsKey{db, name}]; ok {
		return c, nil
	}
	return s.createLocked(db, name, nil)
}

// createLocked creates a collection with its _id index; s.mu is held.
func (s *Store) createLocked(db, name string, options bson.D) (*Collection, error) {
	if err := s.checkWritable(); err != nil {
		return nil, err
	}
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, err
	}
	id[6] = id[6]&0x0f | 0x40 // RFC 4122 version 4
	id[8] = id[8]&0x3f | 0x80
	c := newCollection(s, db, name, id, cloneD(options))
	if err := s.persistCatalog(c); err != nil {
		return nil, err
	}
	s.colls[nsKey{db, name}] = c
	return c, nil
}

// DropCollection drops db.name; reports whether it existed.
func (s *Store) DropCollection(db, name string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkOpen(); err != nil {
		return false, err
	}
	return s.dropLocked(db, name)
}

func (s *Store) dropLocked(db, name string) (bool, error) {
	c, ok := s.colls[nsKey{db, name}]
	if !ok {
		return false, nil
	}
	if err := s.checkWritable(); err != nil {
		return false, err
	}
	// Wait for the collection's writes in progress, then retire it.
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := s.persistDrop(c); err != nil {
		return false, err
	}
	c.dropped = true
	delete(s.colls, nsKey{db, name})
	return true, nil
}

// DropDatabase drops every collection of db.
func (s *Store) DropDatabase(db string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkOpen(); err != nil {
		return err
	}
	var names []string
	for k := range s.colls {
		if k.db == db {
			names = append(names, k.name)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		if _, err := s.dropLocked(db, n); err != nil {
			return err
		}
	}
	return nil
}

// snapshot returns the current collections.
func (s *Store) snapshot() []*Collection {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]*Collection, 0, len(s.colls))
	for _, c := range s.colls {
		out = append(out, c)
	}
	return out
}

// checkOpen fails once Close has begun; s.mu is held.
func (s *Store) checkOpen() error {
	if s.closed {
		return mongoerr.New(mongoerr.ShutdownInProgress, "the storage engine is shutting down")
	}
	return nil
}

// checkWritable fails once a durable write has failed.
func (s *Store) checkWritable() error {
	if p := s.failed.Load(); p != nil {
		return mongoerr.New(mongoerr.InternalError,
			"storage is failed after an I/O error and accepts no more writes (restart required): %v", *p)
	}
	return nil
}

// fail records the first durability failure.
func (s *Store) fail(err error) {
	s.failed.CompareAndSwap(nil, &err)
}

// Failed reports the durability error that put the store into its failed state, or nil.
func (s *Store) Failed() error {
	if p := s.failed.Load(); p != nil {
		return *p
	}
	return nil
}

func cloneD(d bson.D) bson.D { return bsonkit.CopyDoc(d) }
