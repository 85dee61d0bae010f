package storage

import (
	"sync"
	"unsafe"

	"github.com/google/btree"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
	"github.com/bankd/bankd/embedmongo/internal/query"
)

// maxDocSize is mongod's BSON document size limit.
const maxDocSize = 16 * 1024 * 1024

// record is a stored document: encoded BSON keeps a million documents small in memory. raw
// is immutable, held as a string (a smaller header than a slice, in every btree slot).
type record struct {
	id  RecordID
	raw string
}

// frozen views freshly encoded bytes, which nothing else references or modifies, as a string.
func frozen(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// decode parses a stored document into a fresh bson.D: the decoder only reads its input and
// copies what it keeps (strings, binary data), so the result never aliases the store.
func (r record) decode() (bson.D, error) {
	return bsonkit.Decode(unsafe.Slice(unsafe.StringData(r.raw), len(r.raw)))
}

func lessRecord(a, b record) bool { return a.id < b.id }

// Collection is one collection's documents and indexes.
type Collection struct {
	store    *Store
	db, name string
	uuid     [16]byte
	options  bson.D

	// mu guards everything below: Find holds it shared, Write exclusively for the whole
	// read-modify-write, so a findAndModify inside one Write is atomic.
	mu       sync.RWMutex
	docs     *btree.BTreeG[record]
	nextID   RecordID
	dataSize int64
	indexes  []*index // the _id index first
	dropped  bool
	closed   bool
}

func newCollection(s *Store, db, name string, id [16]byte, options bson.D) *Collection {
	c := &Collection{
		store: s, db: db, name: name, uuid: id, options: options,
		docs:   btree.NewG(32, lessRecord),
		nextID: 1,
	}
	spec, err := normalizeSpec(IndexSpec{Name: "_id_", Key: bson.D{{Key: "_id", Value: int32(1)}}, Unique: true})
	if err != nil {
		panic(err) // the _id spec is constant
	}
	idIndex, err := newIndex(spec)
	if err != nil {
		panic(err) // the _id spec is constant
	}
	c.indexes = []*index{idIndex}
	return c
}

// Name returns the collection's name; DB its database's.
func (c *Collection) Name() string { return c.name }

// DB returns the name of the collection's database.
func (c *Collection) DB() string { return c.db }

// UUID returns the collection's UUID as listCollections shows it.
func (c *Collection) UUID() bson.Binary {
	return bson.Binary{Subtype: 4, Data: append([]byte(nil), c.uuid[:]...)}
}

// Options returns the options the collection was created with.
func (c *Collection) Options() bson.D { return cloneD(c.options) }

// Count returns the number of documents.
func (c *Collection) Count() int64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return int64(c.docs.Len())
}

// DataSize returns the total BSON size of the documents.
func (c *Collection) DataSize() int64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.dataSize
}

// Indexes lists the index definitions (the _id index first).
func (c *Collection) Indexes() []IndexSpec {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]IndexSpec, len(c.indexes))
	for i, ix := range c.indexes {
		out[i] = ix.spec.clone()
	}
	return out
}

// Find returns the documents matching filter (candidates narrowed by an index when the filter
// allows, then confirmed by match), in natural order, as copies the caller owns. A nil match
// compiles filter with the query package. A dropped collection has no documents.
func (c *Collection) Find(filter bson.D, match MatchFunc) ([]Doc, error) {
	return c.FindLimit(filter, match, 0)
}

// FindLimit is Find stopping after limit documents (0 = no limit), so findOne-style reads on a
// large collection do not decode it all.
func (c *Collection) FindLimit(filter bson.D, match MatchFunc, limit int) ([]Doc, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return nil, errShutdown()
	}
	if c.dropped {
		return nil, nil
	}
	// After an I/O failure memory may hold writes that never reached disk: serve nothing
	// (mongod would have stopped).
	if err := c.store.checkWritable(); err != nil {
		return nil, err
	}
	return c.findLocked(filter, match, limit)
}

func (c *Collection) findLocked(filter bson.D, match MatchFunc, limit int) ([]Doc, error) {
	if match == nil {
		m, err := query.Compile(filter, query.Options{})
		if err != nil {
			return nil, err
		}
		match = m.Match
	}
	var out []Doc
	var err error
	visit := func(r record) bool {
		var d bson.D
		if d, err = r.decode(); err != nil {
			return false
		}
		var ok bool
		if ok, err = match(d); err != nil {
			return false
		}
		if ok {
			out = append(out, Doc{ID: r.id, Doc: d})
		}
		return limit <= 0 || len(out) < limit
	}
	if ids, ok := c.candidates(filter); ok {
		for _, id := range ids {
			if r, found := c.docs.Get(record{id: id}); found && !visit(r) {
				break
			}
		}
	} else {
		c.docs.Ascend(visit)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Write runs fn with the collection locked against other writers: each Tx operation is applied
// at once (atomically per document, as in mongod) and the whole batch is made durable before
// Write returns. On a storage failure the batch is rolled back and an error is returned, so
// nothing unstored is ever acknowledged.
//
// Operations that succeeded are kept (and made durable) even when fn returns an error, as
// mongod keeps the documents an ordered insertMany wrote before its failing one; fn's error is
// then returned. A panic in fn rolls the batch back and re-panics.
func (c *Collection) Write(fn func(tx *Tx) error) error {
	wait, err := c.WriteDeferred(fn)
	if werr := wait(); werr != nil {
		return werr
	}
	return err
}

// WriteDeferred is Write without the wait for durability: it returns once the batch is applied
// and queued to the log, with a wait function that blocks until the batch is durable (and must
// be called, even when err is not nil). A command of many statements runs each as its own
// write and waits once at the end, so its statements share fsyncs as mongod's do; a later
// write's sync covers every earlier one, the log being sequential.
func (c *Collection) WriteDeferred(fn func(tx *Tx) error) (wait func() error, err error) {
	s := c.store
	c.mu.Lock()
	locked := true
	defer func() {
		if locked {
			c.mu.Unlock()
		}
	}()
	if c.closed {
		return noWait, errShutdown()
	}
	if c.dropped {
		return noWait, mongoerr.New(mongoerr.NamespaceNotFound,
			"collection %s.%s was dropped during the operation; retry it", c.db, c.name)
	}
	if err := s.checkWritable(); err != nil {
		return noWait, err
	}
	tx := &Tx{c: c}
	if s.db != nil {
		tx.batch = s.db.NewBatch()
	}
	fnErr := tx.run(fn)
	tx.done = true
	if len(tx.undo) == 0 || tx.batch == nil {
		if tx.batch != nil {
			_ = tx.batch.Close()
		}
		return noWait, fnErr
	}
	// Commit while still holding the lock, so the log's order is the order of memory.
	syncWait, err := s.commit(tx.batch)
	if err != nil {
		tx.rollback()
		return noWait, err
	}
	s.syncing.Add(1) // before unlocking: Close waits for the lock, then for this
	locked = false
	c.mu.Unlock()
	// The fsync happens outside the lock: concurrent writers share one (group commit).
	var once sync.Once
	var syncErr error
	return func() error {
		once.Do(func() {
			syncErr = syncWait()
			s.syncing.Done()
		})
		return syncErr
	}, fnErr
}

func noWait() error { return nil }

func errShutdown() error {
	return mongoerr.New(mongoerr.ShutdownInProgress, "the storage engine is shutting down")
}
