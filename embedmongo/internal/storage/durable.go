package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"syscall"

	"github.com/cockroachdb/pebble"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// On-disk layout (one Pebble key space):
//
//	'c' uuid              → catalog entry {db, name, uuid, options, indexes: [spec...]}
//	'd' uuid recordID(BE) → the document's BSON
const (
	prefixCatalog = 'c'
	prefixDoc     = 'd'
)

func catalogKey(id [16]byte) []byte {
	return append([]byte{prefixCatalog}, id[:]...)
}

func docKey(id [16]byte, rid RecordID) []byte {
	k := make([]byte, 1+16+8)
	k[0] = prefixDoc
	copy(k[1:], id[:])
	binary.BigEndian.PutUint64(k[17:], uint64(rid))
	return k
}

// docPrefixEnd returns the key range [start, end) of a collection's documents.
func docRange(id [16]byte) (start, end []byte) {
	start = append([]byte{prefixDoc}, id[:]...)
	end = append([]byte(nil), start...)
	for i := len(end) - 1; i >= 0; i-- { // increment the prefix
		end[i]++
		if end[i] != 0 {
			break
		}
	}
	return start, end
}

// memTableSize is Pebble's memtable size (at most two are held at once).
const memTableSize = 64 << 20

// pebbleLogger keeps Pebble quiet and turns its fatal errors into panics the store recovers
// from (entering its failed state) instead of exiting the process.
type pebbleLogger struct{}

func (pebbleLogger) Infof(string, ...any) {}

func (pebbleLogger) Fatalf(format string, args ...any) {
	panic(fmt.Errorf("pebble: "+format, args...))
}

func (s *Store) openDurable() error {
	// Documents are served from memory; Pebble is the durable copy, read only at start. A
	// memtable far above Pebble's 4 MiB default lets the many versions a busy document gets
	// (a lease, its legs, its state changes) replace each other in memory instead of each
	// being flushed and then compacted away.
	db, err := pebble.Open(s.opts.Dir, &pebble.Options{FS: s.opts.FS, Logger: pebbleLogger{},
		MemTableSize: memTableSize})
	if err != nil {
		if isLockError(err) {
			return fmt.Errorf("storage: data directory %s is in use by another process: %w", s.opts.Dir, err)
		}
		return fmt.Errorf("storage: open %s: %w", s.opts.Dir, err)
	}
	s.db = db
	if err := s.load(); err != nil {
		_ = db.Close()
		return fmt.Errorf("storage: load %s: %w", s.opts.Dir, err)
	}
	return nil
}

func isLockError(err error) bool {
	return errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EACCES) ||
		strings.Contains(err.Error(), "lock held by current process")
}

// load reads the catalog and every document into memory, rebuilding the indexes.
func (s *Store) load() error {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixCatalog}, UpperBound: []byte{prefixCatalog + 1}})
	if err != nil {
		return err
	}
	var colls []*Collection
	for it.First(); it.Valid(); it.Next() {
		c, err := s.decodeCatalog(it.Value())
		if err != nil {
			_ = it.Close()
			return err
		}
		colls = append(colls, c)
	}
	if err := it.Close(); err != nil {
		return err
	}
	for _, c := range colls {
		start, end := docRange(c.uuid)
		it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: start, UpperBound: end})
		if err != nil {
			return err
		}
		for it.First(); it.Valid(); it.Next() {
			k := it.Key()
			rid := RecordID(binary.BigEndian.Uint64(k[len(k)-8:]))
			if err := c.putRaw(record{id: rid, raw: string(it.Value())}); err != nil {
				_ = it.Close()
				return fmt.Errorf("collection %s.%s record %d: %w", c.db, c.name, rid, err)
			}
		}
		if err := it.Close(); err != nil {
			return err
		}
		s.colls[nsKey{c.db, c.name}] = c
	}
	return nil
}

func (s *Store) decodeCatalog(raw []byte) (*Collection, error) {
	d, err := bsonkit.Decode(raw)
	if err != nil {
		return nil, err
	}
	db, _ := bsonkit.Get(d, "db")
	name, _ := bsonkit.Get(d, "name")
	uv, _ := bsonkit.Get(d, "uuid")
	bin, ok := uv.(bson.Binary)
	dbs, ok1 := db.(string)
	names, ok2 := name.(string)
	if !ok || len(bin.Data) != 16 || !ok1 || !ok2 {
		return nil, fmt.Errorf("corrupt catalog entry %v", d)
	}
	var id [16]byte
	copy(id[:], bin.Data)
	opts, _ := bsonkit.Get(d, "options")
	optD, _ := opts.(bson.D)
	c := newCollection(s, dbs, names, id, optD)
	specs, _ := bsonkit.Get(d, "indexes")
	arr, _ := specs.(bson.A)
	for _, sv := range arr {
		sd, _ := sv.(bson.D)
		sp, err := ParseIndexSpec(sd)
		if err != nil {
			return nil, fmt.Errorf("collection %s.%s index %v: %w", dbs, names, sd, err)
		}
		if sp.Name == "_id_" {
			continue
		}
		ix, err := newIndex(sp)
		if err != nil {
			return nil, err
		}
		c.indexes = append(c.indexes, ix)
	}
	return c, nil
}

func (c *Collection) catalogEntry() ([]byte, error) {
	specs := make(bson.A, len(c.indexes))
	for i, ix := range c.indexes {
		specs[i] = ix.spec.Spec
	}
	d := bson.D{
		{Key: "db", Value: c.db},
		{Key: "name", Value: c.name},
		{Key: "uuid", Value: c.UUID()},
		{Key: "options", Value: orEmpty(c.options)},
		{Key: "indexes", Value: specs},
	}
	return bsonkit.Encode(d)
}

// persistCatalog durably records c's catalog entry (creation, index changes).
func (s *Store) persistCatalog(c *Collection) error {
	if s.db == nil {
		return nil
	}
	raw, err := c.catalogEntry()
	if err != nil {
		return err
	}
	b := s.db.NewBatch()
	if err := b.Set(catalogKey(c.uuid), raw, nil); err != nil {
		_ = b.Close()
		return err
	}
	return s.commitAndWait(b)
}

// persistDrop durably removes c's catalog entry and documents.
func (s *Store) persistDrop(c *Collection) error {
	if s.db == nil {
		return nil
	}
	b := s.db.NewBatch()
	start, end := docRange(c.uuid)
	if err := b.DeleteRange(start, end, nil); err != nil {
		_ = b.Close()
		return err
	}
	if err := b.Delete(catalogKey(c.uuid), nil); err != nil {
		_ = b.Close()
		return err
	}
	return s.commitAndWait(b)
}

func (s *Store) commitAndWait(b *pebble.Batch) error {
	if err := s.checkWritable(); err != nil {
		_ = b.Close()
		return err
	}
	wait, err := s.commit(b)
	if err != nil {
		return err
	}
	return wait()
}

// commit applies b to Pebble (its WAL and memtable) and returns a function that waits for the
// WAL fsync covering it. Pebble's log writer syncs every record queued so far in one fsync,
// so writers that wait concurrently share it (group commit). Any failure puts the store into
// its failed state: Pebble's commit pipeline cannot be trusted after one.
func (s *Store) commit(b *pebble.Batch) (wait func() error, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
			s.fail(err)
			err = ioError(err)
		}
	}()
	if err := s.db.ApplyNoSyncWait(b, pebble.Sync); err != nil {
		s.fail(err)
		return nil, ioError(err)
	}
	return func() error {
		err := b.SyncWait()
		_ = b.Close()
		if err != nil {
			s.fail(err)
			return ioError(err)
		}
		return nil
	}, nil
}

func ioError(err error) error {
	return mongoerr.New(mongoerr.InternalError, "storage: write could not be made durable: %v", err)
}

func (s *Store) closeDurable() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("storage: close: %v", r)
		}
	}()
	err = s.db.Close()
	if f := s.Failed(); f != nil && err == nil {
		err = fmt.Errorf("storage: closed after failure: %w", f)
	}
	return err
}
