package embedmongo

import (
	"bytes"
	"crypto/sha256"
	"sort"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// sessionTimeout is mongod's localLogicalSessionTimeoutMinutes default: a session unused
// this long leaves the cache.
const sessionTimeout = 30 * time.Minute

// emptyUserDigest is the uid of every session without authentication: SHA-256 of the empty
// user name, as mongod computes it.
var emptyUserDigest = func() []byte { s := sha256.Sum256(nil); return s[:] }()

// sessionCache is mongod's logical session cache: the sessions (lsid) commands have used,
// with when each was last used, for $listLocalSessions.
type sessionCache struct {
	mu sync.Mutex
	m  map[[16]byte]time.Time
}

func newSessionCache() *sessionCache { return &sessionCache{m: map[[16]byte]time.Time{}} }

// sessionID extracts the UUID of an lsid document ({id: UUID}).
func sessionID(lsid any) ([16]byte, bool) {
	var id [16]byte
	d, ok := lsid.(bson.D)
	if !ok {
		return id, false
	}
	v, _ := lookup(d, "id")
	b, ok := v.(bson.Binary)
	if !ok || len(b.Data) != 16 {
		return id, false
	}
	copy(id[:], b.Data)
	return id, true
}

// touch records a command's use of its session.
func (sc *sessionCache) touch(lsid any, now time.Time) {
	id, ok := sessionID(lsid)
	if !ok {
		return
	}
	sc.mu.Lock()
	sc.m[id] = now
	sc.mu.Unlock()
}

// end removes the given sessions (endSessions).
func (sc *sessionCache) end(lsids bson.A) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for _, l := range lsids {
		if id, ok := sessionID(l); ok {
			delete(sc.m, id)
		}
	}
}

// reap drops sessions unused since before.
func (sc *sessionCache) reap(before time.Time) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for id, t := range sc.m {
		if t.Before(before) {
			delete(sc.m, id)
		}
	}
}

// list returns the cached sessions as $listLocalSessions shows them.
func (sc *sessionCache) list() []bson.D {
	sc.mu.Lock()
	ids := make([][16]byte, 0, len(sc.m))
	for id := range sc.m {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return bytes.Compare(ids[i][:], ids[j][:]) < 0 })
	out := make([]bson.D, len(ids))
	for i, id := range ids {
		out[i] = bson.D{
			{Key: "_id", Value: bson.D{
				{Key: "id", Value: bson.Binary{Subtype: 4, Data: append([]byte(nil), id[:]...)}},
				{Key: "uid", Value: bson.Binary{Subtype: 0, Data: append([]byte(nil), emptyUserDigest...)}},
			}},
			{Key: "lastUse", Value: bson.NewDateTimeFromTime(sc.m[id])},
		}
	}
	sc.mu.Unlock()
	return out
}

func cmdEndSessions(c *cmdCtx) (bson.D, error) {
	ids, _, err := c.arrayArg(c.name)
	if err != nil {
		return nil, err
	}
	c.srv.sessions.end(ids)
	return bson.D{}, nil
}

func cmdKillAllSessions(*cmdCtx) (bson.D, error) { return bson.D{}, nil }

// LocalSessions implements agg.SessionLister.
func (e *aggEnv) LocalSessions() []bson.D { return e.srv.sessions.list() }
