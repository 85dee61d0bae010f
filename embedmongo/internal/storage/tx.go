package storage

import (
	"github.com/cockroachdb/pebble"
	"go.mongodb.org/mongo-driver/v2/bson"
	"unsafe"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// Tx is a write in progress on one collection.
type Tx struct {
	c     *Collection
	batch *pebble.Batch // nil in memory
	undo  []undoRec
	done  bool
}

type undoKind uint8

const (
	undoInsert undoKind = iota
	undoReplace
	undoDelete
)

// undoRec reverts one applied operation if the batch cannot be committed.
type undoRec struct {
	kind undoKind
	id   RecordID
	old  string // the previous document for replace and delete
}

// run calls fn, rolling back and re-panicking if it panics.
func (tx *Tx) run(fn func(tx *Tx) error) error {
	defer func() {
		if r := recover(); r != nil {
			tx.rollback()
			if tx.batch != nil {
				_ = tx.batch.Close()
			}
			panic(r)
		}
	}()
	return fn(tx)
}

func (tx *Tx) check() error {
	if tx.done {
		return mongoerr.New(mongoerr.InternalError, "storage: transaction used after Write returned")
	}
	return nil
}

// Find is Collection.Find within the write (sees the transaction's own changes).
func (tx *Tx) Find(filter bson.D, match MatchFunc) ([]Doc, error) {
	return tx.FindLimit(filter, match, 0)
}

// FindLimit is Collection.FindLimit within the write.
func (tx *Tx) FindLimit(filter bson.D, match MatchFunc, limit int) ([]Doc, error) {
	if err := tx.check(); err != nil {
		return nil, err
	}
	return tx.c.findLocked(filter, match, limit)
}

// Get returns the document with record id, or false when there is none.
func (tx *Tx) Get(id RecordID) (bson.D, bool, error) {
	if err := tx.check(); err != nil {
		return nil, false, err
	}
	r, ok := tx.c.docs.Get(record{id: id})
	if !ok {
		return nil, false, nil
	}
	d, err := r.decode()
	return d, err == nil, err
}

// Insert stores a new document (which must have an _id); DuplicateKey (11000) with keyPattern
// and keyValue on a unique index violation.
func (tx *Tx) Insert(doc bson.D) (RecordID, error) {
	if err := tx.check(); err != nil {
		return 0, err
	}
	if _, ok := bsonkit.Get(doc, "_id"); !ok {
		return 0, mongoerr.New(mongoerr.InternalError, "storage: document to insert has no _id")
	}
	raw, err := tx.c.encodeRaw(doc)
	if err != nil {
		return 0, err
	}
	return tx.insertRaw(raw)
}

// InsertEncoded is Insert for a document already encoded, _id first, within the size limit:
// the caller hands raw over and must not change it afterwards.
func (tx *Tx) InsertEncoded(raw []byte) (RecordID, error) {
	if err := tx.check(); err != nil {
		return 0, err
	}
	if !hasIDFirst(raw) {
		return 0, mongoerr.New(mongoerr.InternalError, "storage: document to insert has no _id first")
	}
	return tx.insertRaw(raw)
}

func (tx *Tx) insertRaw(raw []byte) (RecordID, error) {
	c := tx.c
	keys, err := c.keysOfRaw(raw)
	if err != nil {
		return 0, err
	}
	if err := c.checkUniques(keys, c.nextID, nil); err != nil {
		return 0, err
	}
	id := c.nextID
	c.nextID++
	c.put(record{id: id, raw: frozen(raw)}, keys)
	tx.undo = append(tx.undo, undoRec{kind: undoInsert, id: id})
	if tx.batch != nil {
		if err := tx.batch.Set(docKey(c.uuid, id), raw, nil); err != nil {
			return 0, err
		}
	}
	return id, nil
}

// Replace replaces the document with record id; unique index violations as for Insert.
func (tx *Tx) Replace(id RecordID, doc bson.D) error {
	return tx.ReplaceTouching(id, doc, nil, false)
}

// ReplaceTouching is Replace for a document of which at most the top-level fields touched
// differ (when known is set): the keys of indexes on other fields are neither computed nor
// rewritten. An update's own paths say which fields it touches.
func (tx *Tx) ReplaceTouching(id RecordID, doc bson.D, touched []string, known bool) error {
	raw, err := tx.c.encodeRaw(doc)
	if err != nil {
		return err
	}
	return tx.ReplaceEncoded(id, raw, touched, known)
}

// ReplaceEncoded is ReplaceTouching for a document already encoded, within the size limit: the
// caller hands raw over and must not change it afterwards.
func (tx *Tx) ReplaceEncoded(id RecordID, raw []byte, touched []string, known bool) error {
	if err := tx.check(); err != nil {
		return err
	}
	c := tx.c
	old, ok := c.docs.Get(record{id: id})
	if !ok {
		return mongoerr.New(mongoerr.NoSuchKey, "storage: no document with record id %d", id)
	}
	// Most updates leave most index keys alone (a balance change touches no index): only the
	// indexes whose keys changed are checked and rewritten, and the keys of indexes on fields
	// the update does not touch are not even computed.
	need := make([]bool, len(c.indexes))
	for i, ix := range c.indexes {
		need[i] = !known || ix.partial != nil || ix.touchedBy(touched)
	}
	keys, err := c.keysOfRawFor(raw, need)
	if err != nil {
		return err
	}
	oldKeys, err := c.keysOfRawFor(unsafe.Slice(unsafe.StringData(old.raw), len(old.raw)), need)
	if err != nil {
		return err
	}
	same := make([]bool, len(c.indexes))
	for i := range c.indexes {
		same[i] = !need[i] || sameKeys(oldKeys[i], keys[i])
	}
	if err := c.checkUniques(keys, id, same); err != nil {
		return err
	}
	c.docs.ReplaceOrInsert(record{id: id, raw: frozen(raw)})
	c.dataSize += int64(len(raw)) - int64(len(old.raw))
	for i, ix := range c.indexes {
		if !same[i] {
			ix.delete(id, oldKeys[i])
			ix.insert(id, keys[i])
		}
	}
	tx.undo = append(tx.undo, undoRec{kind: undoReplace, id: id, old: old.raw})
	if tx.batch != nil {
		if err := tx.batch.Set(docKey(c.uuid, id), raw, nil); err != nil {
			return err
		}
	}
	return nil
}

// Delete removes the document with record id.
func (tx *Tx) Delete(id RecordID) error {
	if err := tx.check(); err != nil {
		return err
	}
	c := tx.c
	old, ok := c.docs.Get(record{id: id})
	if !ok {
		return mongoerr.New(mongoerr.NoSuchKey, "storage: no document with record id %d", id)
	}
	if err := c.remove(old); err != nil {
		return err
	}
	tx.undo = append(tx.undo, undoRec{kind: undoDelete, id: id, old: old.raw})
	if tx.batch != nil {
		if err := tx.batch.Delete(docKey(c.uuid, id), nil); err != nil {
			return err
		}
	}
	return nil
}

// rollback reverts the applied operations, newest first. Each document was valid when it was
// stored, so re-indexing it cannot fail.
func (tx *Tx) rollback() {
	c := tx.c
	for i := len(tx.undo) - 1; i >= 0; i-- {
		u := tx.undo[i]
		if cur, ok := c.docs.Get(record{id: u.id}); ok {
			_ = c.remove(cur)
		}
		if u.kind != undoInsert {
			_ = c.putRaw(record{id: u.id, raw: u.old})
		}
	}
	tx.undo = nil
}

// hasIDFirst reports an encoded document whose first field is _id.
func hasIDFirst(raw []byte) bool {
	return len(raw) > 9 && string(raw[5:9]) == "_id\x00"
}

// checkUniques enforces the unique indexes, skipping those whose keys are unchanged (skip[i]).
func (c *Collection) checkUniques(keys [][]ikey, self RecordID, skip []bool) error {
	for i, ix := range c.indexes {
		if ix.spec.Unique && (skip == nil || !skip[i]) {
			if err := c.checkUnique(ix, keys[i], self); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *Collection) keysOfRecord(r record) ([][]ikey, error) {
	return c.keysOfRaw(unsafe.Slice(unsafe.StringData(r.raw), len(r.raw)))
}

// encodeRaw encodes a document for storage, within the size limit.
func (c *Collection) encodeRaw(doc bson.D) ([]byte, error) {
	raw, err := bsonkit.Encode(doc)
	if err != nil {
		return nil, mongoerr.New(mongoerr.BadValue, "cannot encode document: %v", err)
	}
	if len(raw) > maxDocSize {
		return nil, mongoerr.New(mongoerr.BSONObjectTooLarge,
			"object to insert too large. size in bytes: %d, max size: %d", len(raw), maxDocSize)
	}
	return raw, nil
}

// keysOfRawFor computes the keys of the indexes marked in need (nil for the others), decoding
// only the fields those indexes name.
func (c *Collection) keysOfRawFor(raw []byte, need []bool) ([][]ikey, error) {
	keys := make([][]ikey, len(c.indexes))
	some := false
	for _, n := range need {
		some = some || n
	}
	if !some {
		return keys, nil
	}
	d, err := c.indexedFieldsOf(raw)
	if err != nil {
		return nil, err
	}
	for i, ix := range c.indexes {
		if need[i] {
			if keys[i], err = ix.keysOf(d); err != nil {
				return nil, err
			}
		}
	}
	return keys, nil
}

// keysOfRaw computes every index's keys for an encoded document, decoding only the fields the
// indexes need.
func (c *Collection) keysOfRaw(raw []byte) ([][]ikey, error) {
	d, err := c.indexedFieldsOf(raw)
	if err != nil {
		return nil, err
	}
	keys := make([][]ikey, len(c.indexes))
	for i, ix := range c.indexes {
		if keys[i], err = ix.keysOf(d); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// sameKeys reports whether two key lists are equal, so an index needs no rewrite.
func sameKeys(a, b []ikey) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameValue(a[i].key, b[i].key) {
			return false
		}
	}
	return true
}

// sameValue is equality of type and value: an index entry may be reused only if it is the
// very same key (1 and 1.0 compare equal but are different values).
func sameValue(a, b any) bool {
	if bsonkit.TypeCode(a) != bsonkit.TypeCode(b) {
		return false
	}
	if ca, ok := a.(compoundKey); ok {
		cb, ok := b.(compoundKey)
		if !ok || len(ca) != len(cb) {
			return false
		}
		for i := range ca {
			if !sameValue(ca[i], cb[i]) {
				return false
			}
		}
		return true
	}
	return bsonkit.Compare(a, b) == 0
}

// put stores r with its precomputed index keys.
func (c *Collection) put(r record, keys [][]ikey) {
	c.docs.ReplaceOrInsert(r)
	c.dataSize += int64(len(r.raw))
	for i, ix := range c.indexes {
		ix.insert(r.id, keys[i])
	}
}

// putRaw stores r, computing its index keys without unique checks (reload and rollback).
func (c *Collection) putRaw(r record) error {
	d, err := r.decode()
	if err != nil {
		return err
	}
	keys := make([][]ikey, len(c.indexes))
	for i, ix := range c.indexes {
		if keys[i], err = ix.keysOf(d); err != nil {
			return err
		}
	}
	c.put(r, keys)
	if r.id >= c.nextID {
		c.nextID = r.id + 1
	}
	return nil
}

// remove deletes r and its index entries.
func (c *Collection) remove(r record) error {
	d, err := c.indexedFields(r)
	if err != nil {
		return err
	}
	for _, ix := range c.indexes {
		keys, err := ix.keysOf(d)
		if err != nil {
			return err
		}
		ix.delete(r.id, keys)
	}
	c.docs.Delete(r)
	c.dataSize -= int64(len(r.raw))
	return nil
}

// indexedFields decodes just enough of a stored document to compute its index keys.
func (c *Collection) indexedFields(r record) (bson.D, error) {
	return c.indexedFieldsOf(unsafe.Slice(unsafe.StringData(r.raw), len(r.raw)))
}

// indexedFieldsOf decodes the top-level fields the indexes name, or the whole document when a
// partial index's filter may look at any field. It is on every write's path.
func (c *Collection) indexedFieldsOf(raw []byte) (bson.D, error) {
	for _, ix := range c.indexes {
		if ix.partial != nil {
			return bsonkit.Decode(raw)
		}
	}
	return bsonkit.DecodeFields(raw, func(key string) bool {
		for _, ix := range c.indexes {
			for _, parts := range ix.parts {
				if parts[0] == key {
					return true
				}
			}
		}
		return false
	})
}
