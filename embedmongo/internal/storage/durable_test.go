package storage

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

func TestPersistAcrossReopen(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir})
	require.NoError(t, err)
	require.NoError(t, s.CreateCollection("bank", "accounts", bson.D{{Key: "validator", Value: key("x", int32(1))}}))
	c := s.Collection("bank", "accounts")
	_, err = c.CreateIndexes([]IndexSpec{{Key: key("owner", int32(1)), Unique: true}, {Key: key("t", int32(1)), Name: "ttl", ExpireAfterSeconds: new(int64)}})
	require.NoError(t, err)
	rids := insertAll(t, c, doc(1, "owner", "ann"), doc(2, "owner", "bob"), doc(3, "owner", "cy"))
	require.NoError(t, c.Write(func(tx *Tx) error {
		if err := tx.Replace(rids[0], doc(1, "owner", "ann", "balance", int64(10))); err != nil {
			return err
		}
		return tx.Delete(rids[1])
	}))
	gone := mustColl(t, s, "gone")
	insertAll(t, gone, doc(1))
	_, err = s.DropCollection("db", "gone")
	require.NoError(t, err)
	other := mustColl(t, s, "other")
	insertAll(t, other, doc(1))
	require.NoError(t, other.DropIndex("*"))
	uuid := c.UUID()
	require.NoError(t, s.Close())

	s, err = Open(Options{Dir: dir})
	require.NoError(t, err)
	defer s.Close()
	c = s.Collection("bank", "accounts")
	require.NotNil(t, c)
	require.Equal(t, uuid, c.UUID())
	require.Equal(t, bson.D{{Key: "validator", Value: key("x", int32(1))}}, c.Options())
	docs, err := c.Find(nil, all)
	require.NoError(t, err)
	require.Equal(t, []any{int32(1), int32(3)}, ids(docs))
	require.Equal(t, doc(1, "owner", "ann", "balance", int64(10)), docs[0].Doc)
	require.Equal(t, rids[0], docs[0].ID)
	specs := c.Indexes()
	require.Len(t, specs, 3)
	require.Equal(t, "owner_1", specs[1].Name)
	require.Equal(t, "ttl", specs[2].Name)
	require.EqualValues(t, 0, *specs[2].ExpireAfterSeconds)

	// Indexes were rebuilt: unique still enforced, lookups use them.
	err = c.Write(func(tx *Tx) error { _, err := tx.Insert(doc(9, "owner", "cy")); return err })
	require.True(t, mongoerr.Is(err, mongoerr.DuplicateKey), "%v", err)
	got, used := c.candidates(key("owner", "cy"))
	require.True(t, used)
	require.Equal(t, []RecordID{rids[2]}, got)
	// Record ids resume after the highest stored one: natural order stays insertion order.
	newIDs := insertAll(t, c, doc(4, "owner", "dee"))
	require.Greater(t, newIDs[0], rids[2])

	require.Nil(t, s.Collection("db", "gone"))
	require.Len(t, s.Collection("db", "other").Indexes(), 1)
	require.Equal(t, []string{"bank", "db"}, dbNames(s.ListDatabases()))
}

func dbNames(dbs []DatabaseInfo) []string {
	var out []string
	for _, d := range dbs {
		out = append(out, d.Name)
	}
	return out
}

func TestDataDirInUse(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir})
	require.NoError(t, err)
	defer s.Close()
	_, err = Open(Options{Dir: dir})
	require.Error(t, err)
	require.Contains(t, err.Error(), "data directory "+dir+" is in use by another process")
}

// TestCrashKeepsAcknowledgedWrites writes from many goroutines, then simulates a power cut:
// the strict in-memory FS forgets everything not fsynced. Every acknowledged write survives.
func TestCrashKeepsAcknowledgedWrites(t *testing.T) {
	mem := strictMem(t)
	s, err := Open(Options{Dir: "/data", FS: mem})
	require.NoError(t, err)
	c := mustColl(t, s, "c")
	_, err = c.CreateIndexes([]IndexSpec{{Key: key("w", int32(1))}})
	require.NoError(t, err)

	const writers, perWriter = 16, 40
	var mu sync.Mutex
	acked := map[string]bool{}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				id := fmt.Sprintf("%d-%d", w, i)
				err := c.Write(func(tx *Tx) error {
					_, err := tx.Insert(bson.D{{Key: "_id", Value: id}, {Key: "w", Value: int32(w)}})
					return err
				})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				acked[id] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()

	// Crash: from now on nothing reaches "disk"; these writes are lost, as they would be.
	mem.SetIgnoreSyncs(true)
	insertAll(t, c, bson.D{{Key: "_id", Value: "after-crash"}})
	_ = s.Close()
	mem.ResetToSyncedState()
	mem.SetIgnoreSyncs(false)

	s, err = Open(Options{Dir: "/data", FS: mem})
	require.NoError(t, err)
	defer s.Close()
	c = s.Collection("db", "c")
	require.NotNil(t, c)
	docs, err := c.Find(nil, all)
	require.NoError(t, err)
	found := map[string]bool{}
	for _, d := range docs {
		found[d.Doc[0].Value.(string)] = true
	}
	for id := range acked {
		require.True(t, found[id], "acknowledged write %s lost", id)
	}
	require.Len(t, acked, writers*perWriter)
	require.Len(t, c.Indexes(), 2)
}

// strictMem is an in-memory FS that forgets whatever was not fsynced on ResetToSyncedState,
// with /data durably created (Pebble syncs the data dir but not its parent).
func strictMem(t *testing.T) *vfs.MemFS {
	mem := vfs.NewStrictMem()
	require.NoError(t, mem.MkdirAll("/data", 0o755))
	root, err := mem.OpenDir("/")
	require.NoError(t, err)
	require.NoError(t, root.Sync())
	require.NoError(t, root.Close())
	return mem
}

// failingFS fails writes or syncs (every flavour) of the WAL while armed.
type failingFS struct {
	vfs.FS
	armed     atomic.Bool
	failSyncs bool // else fail writes
}

var errInjected = errors.New("injected I/O error")

func (f *failingFS) wrap(file vfs.File, name string, err error) (vfs.File, error) {
	if err != nil || !strings.HasSuffix(name, ".log") {
		return file, err
	}
	return &failingFile{File: file, fs: f}, nil
}

func (f *failingFS) Create(name string) (vfs.File, error) {
	file, err := f.FS.Create(name)
	return f.wrap(file, name, err)
}

func (f *failingFS) ReuseForWrite(oldname, newname string) (vfs.File, error) {
	file, err := f.FS.ReuseForWrite(oldname, newname)
	return f.wrap(file, newname, err)
}

type failingFile struct {
	vfs.File
	fs *failingFS
}

func (f *failingFile) fail(sync bool) bool { return f.fs.armed.Load() && f.fs.failSyncs == sync }

func (f *failingFile) Write(p []byte) (int, error) {
	if f.fail(false) {
		return 0, errInjected
	}
	return f.File.Write(p)
}

func (f *failingFile) Sync() error {
	if f.fail(true) {
		return errInjected
	}
	return f.File.Sync()
}

func (f *failingFile) SyncData() error {
	if f.fail(true) {
		return errInjected
	}
	return f.File.SyncData()
}

func (f *failingFile) SyncTo(length int64) (bool, error) {
	if f.fail(true) {
		return false, errInjected
	}
	return f.File.SyncTo(length)
}

func TestIOFailureIsNeverAcknowledged(t *testing.T) {
	for _, failSyncs := range []bool{false, true} {
		t.Run(fmt.Sprintf("failSyncs=%v", failSyncs), func(t *testing.T) {
			mem := strictMem(t)
			inj := &failingFS{FS: mem, failSyncs: failSyncs}
			s, err := Open(Options{Dir: "/data", FS: inj})
			require.NoError(t, err)
			c := mustColl(t, s, "c")
			insertAll(t, c, doc(1))

			inj.armed.Store(true)
			err = c.Write(func(tx *Tx) error { _, err := tx.Insert(doc(2)); return err })
			require.Error(t, err, "a write that did not reach disk must not be acknowledged")
			require.Error(t, s.Failed())
			// The store refuses every later write: nothing more can be acknowledged.
			inj.armed.Store(false)
			err = c.Write(func(tx *Tx) error { _, err := tx.Insert(doc(3)); return err })
			require.Error(t, err)
			require.Contains(t, err.Error(), "accepts no more writes")
			_, err = s.CollectionOrCreate("db", "new")
			require.Error(t, err)
			_, err = c.Find(nil, all)
			require.Error(t, err, "reads must not show what may not be on disk")
			_ = s.Close()

			// After a crash and restart, the data is exactly the acknowledged writes.
			mem.ResetToSyncedState()
			s, err = Open(Options{Dir: "/data", FS: mem})
			require.NoError(t, err)
			defer s.Close()
			docs, err := s.Collection("db", "c").Find(nil, all)
			require.NoError(t, err)
			require.Equal(t, []any{int32(1)}, ids(docs))
			insertAll(t, s.Collection("db", "c"), doc(2)) // writable again
		})
	}
}

// One write that touches documents out of order and some several times (insert then replace
// twice, replace then delete, insert then delete), as a run of update statements does, leaves
// each document's last version after a reopen.
func TestWriteLogsEachDocumentsLastVersion(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir})
	require.NoError(t, err)
	c := mustColl(t, s, "docs")
	rids := insertAll(t, c, doc(1, "v", int32(0)), doc(2, "v", int32(0)), doc(3, "v", int32(0)))
	require.NoError(t, c.Write(func(tx *Tx) error {
		for _, step := range []func() error{
			func() error { return tx.Replace(rids[2], doc(3, "v", int32(1))) },
			func() error { _, err := tx.Insert(doc(4, "v", int32(1))); return err },
			func() error { return tx.Replace(rids[0], doc(1, "v", int32(1))) },
			func() error { return tx.Replace(rids[2], doc(3, "v", int32(2))) },
			func() error { return tx.Delete(rids[1]) },
			func() error { _, err := tx.Insert(doc(5, "v", int32(1))); return err },
			func() error { return tx.Replace(rids[0], doc(1, "v", int32(2))) },
		} {
			if err := step(); err != nil {
				return err
			}
		}
		found, err := tx.Find(key("_id", int32(5)), all)
		if err != nil || len(found) != 1 {
			return fmt.Errorf("find 5: %v, %v", found, err)
		}
		return tx.Delete(found[0].ID)
	}))
	want, err := c.Find(nil, all)
	require.NoError(t, err)
	require.NoError(t, s.Close())

	s, err = Open(Options{Dir: dir})
	require.NoError(t, err)
	defer s.Close()
	got, err := s.Collection("db", "docs").Find(nil, all)
	require.NoError(t, err)
	require.Equal(t, []any{int32(1), int32(3), int32(4)}, ids(got))
	require.Equal(t, want, got)
	require.Equal(t, doc(1, "v", int32(2)), got[0].Doc)
	require.Equal(t, doc(3, "v", int32(2)), got[1].Doc)
}
