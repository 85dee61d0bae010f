package embedmongo

import (
	"math/rand/v2"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// Cursors hold a command's complete result; getMore hands it out in batches. Results are
// materialized up front, so a cursor never observes later writes (mongod may; nothing relies
// on either behaviour).

const (
	cursorIdleTimeout = 10 * time.Minute // mongod's cursorTimeoutMillis default
	defaultBatchSize  = 101
	maxBatchBytes     = MaxBSONObjectSize
)

type cursor struct {
	id       int64
	ns       string
	docs     []bson.D
	lastUsed time.Time
}

type cursorTable struct {
	mu sync.Mutex
	m  map[int64]*cursor
}

func newCursorTable() *cursorTable { return &cursorTable{m: make(map[int64]*cursor)} }

func (t *cursorTable) add(ns string, docs []bson.D) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	for {
		id := rand.Int64N(1<<62) + 1
		if _, dup := t.m[id]; !dup {
			t.m[id] = &cursor{id: id, ns: ns, docs: docs, lastUsed: time.Now()}
			return id
		}
	}
}

func (t *cursorTable) get(id int64) *cursor {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.m[id]
	if c != nil {
		c.lastUsed = time.Now()
	}
	return c
}

func (t *cursorTable) remove(id int64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.m[id]
	delete(t.m, id)
	return ok
}

func (t *cursorTable) reap(before time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for id, c := range t.m {
		if c.lastUsed.Before(before) {
			delete(t.m, id)
		}
	}
}

// takeBatch splits off up to batchSize documents (0 = no count limit) and at most ~16 MiB.
func takeBatch(docs []bson.D, batchSize int64) (batch, rest []bson.D) {
	size := 0
	n := 0
	for n < len(docs) && (batchSize <= 0 || int64(n) < batchSize) {
		b, err := bsonkit.Encode(docs[n])
		if err == nil {
			size += len(b)
		}
		if n > 0 && size > maxBatchBytes {
			break
		}
		n++
	}
	return docs[:n], docs[n:]
}

// cursorReply builds {cursor: {firstBatch, id, ns}}, registering a cursor for what is left.
func (s *Server) cursorReply(ns string, docs []bson.D, batchSize int64, singleBatch bool) bson.D {
	if batchSize == 0 && !singleBatch {
		batchSize = defaultBatchSize
	}
	batch, rest := takeBatch(docs, batchSize)
	var id int64
	if len(rest) > 0 && !singleBatch {
		id = s.cursors.add(ns, rest)
	}
	return bson.D{{Key: "cursor", Value: bson.D{
		{Key: "firstBatch", Value: docsToArray(batch)},
		{Key: "id", Value: id},
		{Key: "ns", Value: ns},
	}}}
}

func docsToArray(docs []bson.D) bson.A {
	a := make(bson.A, len(docs))
	for i, d := range docs {
		a[i] = d
	}
	return a
}

func cmdGetMore(c *cmdCtx) (bson.D, error) {
	id, ok := c.cmd[0].Value.(int64)
	if !ok {
		return nil, typeMismatch("getMore", "getMore", c.cmd[0].Value, "long")
	}
	collName, _ := lookup(c.cmd, "collection")
	name, ok := collName.(string)
	if !ok {
		return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'getMore.collection' is missing but a required field")
	}
	batchSize, err := c.intArg("batchSize", 0)
	if err != nil {
		return nil, err
	}
	if batchSize < 0 {
		return nil, mongoerr.New(mongoerr.BadValue, "Batch size for getMore must be non-negative, but received: %d", batchSize)
	}
	cur := c.srv.cursors.get(id)
	if cur == nil {
		return nil, mongoerr.New(mongoerr.CursorNotFound, "cursor id %d not found", id)
	}
	if cur.ns != c.db+"."+name && !(name == "$cmd.aggregate" || len(cur.ns) > 0 && cur.ns == c.db+".$cmd."+name) {
		return nil, mongoerr.New(mongoerr.Unauthorized, "Requested getMore on namespace '%s.%s', but cursor belongs to a different namespace %s", c.db, name, cur.ns)
	}
	c.srv.cursors.mu.Lock()
	batch, rest := takeBatch(cur.docs, batchSize)
	cur.docs = rest
	c.srv.cursors.mu.Unlock()
	outID := id
	if len(rest) == 0 {
		c.srv.cursors.remove(id)
		outID = 0
	}
	return bson.D{{Key: "cursor", Value: bson.D{
		{Key: "nextBatch", Value: docsToArray(batch)},
		{Key: "id", Value: outID},
		{Key: "ns", Value: cur.ns},
	}}}, nil
}

func cmdKillCursors(c *cmdCtx) (bson.D, error) {
	if _, err := c.collectionArg(); err != nil {
		return nil, err
	}
	ids, _, err := c.arrayArg("cursors")
	if err != nil {
		return nil, err
	}
	killed, notFound := bson.A{}, bson.A{}
	for _, v := range ids {
		id, ok := v.(int64)
		if !ok {
			return nil, mongoerr.New(mongoerr.TypeMismatch, "Field 'cursors' contains an element that is not of type long: %v", v)
		}
		if c.srv.cursors.remove(id) {
			killed = append(killed, id)
		} else {
			notFound = append(notFound, id)
		}
	}
	return bson.D{
		{Key: "cursorsKilled", Value: killed},
		{Key: "cursorsNotFound", Value: notFound},
		{Key: "cursorsAlive", Value: bson.A{}},
		{Key: "cursorsUnknown", Value: bson.A{}},
	}, nil
}
