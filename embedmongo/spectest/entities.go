package spectest

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readconcern"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"
)

// observedEvent is one command monitoring event seen by a client entity.
type observedEvent struct {
	kind    string // commandStartedEvent, commandSucceededEvent or commandFailedEvent
	name    string
	db      string
	command bson.Raw
	reply   bson.Raw
	failure error
}

// clientEntity is a MongoClient plus the events it recorded.
type clientEntity struct {
	client *mongo.Client

	mu        sync.Mutex
	recording bool
	observe   map[string]bool
	ignore    map[string]bool
	sensitive bool            // observeSensitiveCommands
	dropped   map[int64]bool  // request IDs of ignored started events
	events    []observedEvent // in arrival order

	writeConcern *writeconcern.WriteConcern // from uriOptions, if any
}

// sensitiveCommands are never observed unless observeSensitiveCommands is set (command
// logging and monitoring spec, "Security").
var sensitiveCommands = map[string]bool{
	"authenticate": true, "saslstart": true, "saslcontinue": true, "getnonce": true,
	"createuser": true, "updateuser": true, "copydbgetnonce": true, "copydbsaslstart": true,
	"copydb": true,
}

func (c *clientEntity) ignored(name string, cmd bson.Raw) bool {
	if c.ignore[name] || name == "configureFailPoint" {
		return true
	}
	if c.sensitive {
		return false
	}
	lower := strings.ToLower(name)
	if sensitiveCommands[lower] {
		return true
	}
	// hello is sensitive only with speculativeAuthenticate, in which case the driver redacts it.
	if lower == "hello" || lower == "ismaster" {
		if len(cmd) <= 5 {
			return true
		}
		if _, err := cmd.LookupErr("speculativeAuthenticate"); err == nil {
			return true
		}
	}
	return false
}

func (c *clientEntity) monitor() *event.CommandMonitor {
	return &event.CommandMonitor{
		Started: func(_ context.Context, e *event.CommandStartedEvent) {
			c.mu.Lock()
			defer c.mu.Unlock()
			if !c.recording {
				return
			}
			if c.ignored(e.CommandName, e.Command) {
				c.dropped[e.RequestID] = true
				return
			}
			if c.observe["commandStartedEvent"] {
				c.events = append(c.events, observedEvent{kind: "commandStartedEvent", name: e.CommandName,
					db: e.DatabaseName, command: append(bson.Raw(nil), e.Command...)})
			}
		},
		Succeeded: func(_ context.Context, e *event.CommandSucceededEvent) {
			c.mu.Lock()
			defer c.mu.Unlock()
			if !c.recording || c.dropped[e.RequestID] || c.ignored(e.CommandName, nil) && !c.isHello(e.CommandName) {
				return
			}
			if c.observe["commandSucceededEvent"] {
				c.events = append(c.events, observedEvent{kind: "commandSucceededEvent", name: e.CommandName,
					db: e.DatabaseName, reply: append(bson.Raw(nil), e.Reply...)})
			}
		},
		Failed: func(_ context.Context, e *event.CommandFailedEvent) {
			c.mu.Lock()
			defer c.mu.Unlock()
			if !c.recording || c.dropped[e.RequestID] || c.ignored(e.CommandName, nil) && !c.isHello(e.CommandName) {
				return
			}
			if c.observe["commandFailedEvent"] {
				c.events = append(c.events, observedEvent{kind: "commandFailedEvent", name: e.CommandName,
					db: e.DatabaseName, failure: e.Failure})
			}
		},
	}
}

// isHello: finished hello events are filtered through their started event's request ID only.
func (c *clientEntity) isHello(name string) bool {
	l := strings.ToLower(name)
	return l == "hello" || l == "ismaster"
}

func (c *clientEntity) stopRecording() []observedEvent {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.recording = false
	return append([]observedEvent(nil), c.events...)
}

// entityMap holds the entities of one test.
type entityMap struct {
	clients     map[string]*clientEntity
	databases   map[string]*mongo.Database
	collections map[string]*mongo.Collection
	sessions    map[string]*mongo.Session
	values      map[string]any // results saved with saveResultAsEntity
	// readConcerns remembers collection entities' read concerns: the driver v2 does not expose
	// them, and commands the runner sends itself (count) must carry them.
	readConcerns map[*mongo.Collection]*readconcern.ReadConcern
	// writeConcerns likewise, to spot unacknowledged collections (see driver_gaps.go).
	writeConcerns   map[*mongo.Collection]*writeconcern.WriteConcern
	dbWriteConcerns map[*mongo.Database]*writeconcern.WriteConcern
}

func newEntityMap() *entityMap {
	return &entityMap{
		clients:     map[string]*clientEntity{},
		databases:   map[string]*mongo.Database{},
		collections: map[string]*mongo.Collection{},
		sessions:    map[string]*mongo.Session{},
		values:      map[string]any{},

		readConcerns:  map[*mongo.Collection]*readconcern.ReadConcern{},
		writeConcerns: map[*mongo.Collection]*writeconcern.WriteConcern{},

		dbWriteConcerns: map[*mongo.Database]*writeconcern.WriteConcern{},
	}
}

func (m *entityMap) exists(id string) bool {
	_, a := m.clients[id]
	_, b := m.databases[id]
	_, c := m.collections[id]
	_, d := m.sessions[id]
	_, e := m.values[id]
	return a || b || c || d || e
}

func (m *entityMap) bsonEntity(name string) (any, error) {
	v, ok := m.values[name]
	if !ok {
		return nil, fmt.Errorf("no BSON entity %q", name)
	}
	return v, nil
}

func (m *entityMap) sessionLsid(name string) (bson.D, error) {
	s, ok := m.sessions[name]
	if !ok {
		return nil, fmt.Errorf("no session entity %q", name)
	}
	var d bson.D
	if err := bson.Unmarshal(s.ID(), &d); err != nil {
		return nil, err
	}
	return d, nil
}

// close ends sessions and disconnects clients.
func (m *entityMap) close(ctx context.Context) {
	for _, s := range m.sessions {
		s.EndSession(ctx)
	}
	for _, c := range m.clients {
		c.stopRecording()
		_ = c.client.Disconnect(ctx)
	}
}

// createEntities builds the entities of a test file, in order.
func (r *Runner) createEntities(ctx context.Context, m *entityMap, defs []bson.D) error {
	for _, def := range defs {
		if len(def) != 1 {
			return fmt.Errorf("entity definition must have exactly one key: %s", shortJSON(def))
		}
		kind := def[0].Key
		spec, ok := def[0].Value.(bson.D)
		if !ok {
			return fmt.Errorf("entity %s: definition is not a document", kind)
		}
		a := newArgs("entity "+kind, spec)
		id := a.str("id")
		if id == "" {
			return fmt.Errorf("entity %s without id", kind)
		}
		if m.exists(id) {
			return fmt.Errorf("duplicate entity id %q", id)
		}
		var err error
		switch kind {
		case "client":
			err = r.createClient(ctx, m, id, a)
		case "database":
			err = createDatabase(m, id, a)
		case "collection":
			err = createCollection(m, id, a)
		case "session":
			err = createSession(m, id, a)
		default:
			err = fmt.Errorf("unsupported entity type %q", kind)
		}
		if err != nil {
			return fmt.Errorf("entity %s %q: %w", kind, id, err)
		}
	}
	return nil
}

func (r *Runner) createClient(ctx context.Context, m *entityMap, id string, a *args) error {
	ce := &clientEntity{observe: map[string]bool{}, ignore: map[string]bool{}, dropped: map[int64]bool{}}
	uri := r.uri
	if opts, ok := a.doc("uriOptions"); ok {
		var err error
		if uri, err = withURIOptions(uri, opts); err != nil {
			return err
		}
	}
	for _, v := range a.array("observeEvents") {
		name, _ := v.(string)
		switch name {
		case "commandStartedEvent", "commandSucceededEvent", "commandFailedEvent":
			ce.observe[name] = true
		default:
			return fmt.Errorf("unsupported observeEvents type %q", name)
		}
	}
	for _, v := range a.array("ignoreCommandMonitoringEvents") {
		name, _ := v.(string)
		ce.ignore[name] = true
	}
	ce.sensitive = a.boolean("observeSensitiveCommands")
	// useMultipleMongoses only matters for sharded and load-balanced topologies; the runner
	// connects to the single URI it was given either way.
	a.take("useMultipleMongoses")
	if err := a.finish(); err != nil {
		return err
	}
	copts := options.Client().ApplyURI(uri).SetMonitor(ce.monitor())
	if wc := copts.WriteConcern; wc != nil {
		ce.writeConcern = wc
	}
	client, err := mongo.Connect(copts)
	if err != nil {
		return err
	}
	ce.client = client
	ce.recording = true
	m.clients[id] = ce
	return nil
}

// withURIOptions adds the test's uriOptions to the connection string, overriding duplicates.
func withURIOptions(uri string, opts bson.D) (string, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return "", fmt.Errorf("parse URI: %w", err)
	}
	q := u.Query()
	for _, e := range opts {
		var s string
		switch v := e.Value.(type) {
		case string:
			s = v
		case bool:
			s = fmt.Sprint(v)
		case int32, int64, float64:
			s = fmt.Sprint(v)
		default:
			return "", fmt.Errorf("unsupported uriOptions value %s: %s", e.Key, show(e.Value))
		}
		for k := range q {
			if strings.EqualFold(k, e.Key) {
				q.Del(k)
			}
		}
		q.Set(e.Key, s)
	}
	u.RawQuery = q.Encode()
	if u.Path == "" {
		u.Path = "/"
	}
	return u.String(), nil
}

func createDatabase(m *entityMap, id string, a *args) error {
	ce, ok := m.clients[a.str("client")]
	if !ok {
		return fmt.Errorf("unknown client %q", a.str("client"))
	}
	name := a.str("databaseName")
	dopts := options.Database()
	dbWC := ce.writeConcern
	if d, ok := a.doc("databaseOptions"); ok {
		rc, wc, rp, err := collOrDBOptions(d)
		if err != nil {
			return err
		}
		if rc != nil {
			dopts.SetReadConcern(rc)
		}
		if wc != nil {
			dopts.SetWriteConcern(wc)
			dbWC = wc
		}
		if rp != nil {
			dopts.SetReadPreference(rp)
		}
	}
	if err := a.finish(); err != nil {
		return err
	}
	db := ce.client.Database(name, dopts)
	m.databases[id] = db
	m.dbWriteConcerns[db] = dbWC
	return nil
}

func createCollection(m *entityMap, id string, a *args) error {
	db, ok := m.databases[a.str("database")]
	if !ok {
		return fmt.Errorf("unknown database %q", a.str("database"))
	}
	name := a.str("collectionName")
	copts := options.Collection()
	var collRC *readconcern.ReadConcern
	collWC := m.dbWriteConcerns[db]
	if d, ok := a.doc("collectionOptions"); ok {
		rc, wc, rp, err := collOrDBOptions(d)
		if err != nil {
			return err
		}
		if rc != nil {
			copts.SetReadConcern(rc)
			collRC = rc
		}
		if wc != nil {
			copts.SetWriteConcern(wc)
			collWC = wc
		}
		if rp != nil {
			copts.SetReadPreference(rp)
		}
	}
	if err := a.finish(); err != nil {
		return err
	}
	coll := db.Collection(name, copts)
	m.collections[id] = coll
	m.readConcerns[coll] = collRC
	m.writeConcerns[coll] = collWC
	return nil
}

func createSession(m *entityMap, id string, a *args) error {
	ce, ok := m.clients[a.str("client")]
	if !ok {
		return fmt.Errorf("unknown client %q", a.str("client"))
	}
	sopts := options.Session()
	if d, ok := a.doc("sessionOptions"); ok {
		sa := newArgs("sessionOptions", d)
		if v, ok := sa.take("causalConsistency"); ok {
			b, _ := v.(bool)
			sopts.SetCausalConsistency(b)
		}
		if v, ok := sa.take("snapshot"); ok {
			b, _ := v.(bool)
			sopts.SetSnapshot(b)
		}
		if err := sa.finish(); err != nil {
			return err
		}
	}
	if err := a.finish(); err != nil {
		return err
	}
	s, err := ce.client.StartSession(sopts)
	if err != nil {
		return err
	}
	m.sessions[id] = s
	return nil
}

// collOrDBOptions converts a collectionOrDatabaseOptions document.
func collOrDBOptions(d bson.D) (*readconcern.ReadConcern, *writeconcern.WriteConcern, *readpref.ReadPref, error) {
	a := newArgs("collectionOrDatabaseOptions", d)
	var rc *readconcern.ReadConcern
	var wc *writeconcern.WriteConcern
	var rp *readpref.ReadPref
	var err error
	if v, ok := a.doc("readConcern"); ok {
		if rc, err = readConcern(v); err != nil {
			return nil, nil, nil, err
		}
	}
	if v, ok := a.doc("writeConcern"); ok {
		if wc, err = writeConcern(v); err != nil {
			return nil, nil, nil, err
		}
	}
	if v, ok := a.doc("readPreference"); ok {
		if rp, err = readPreference(v); err != nil {
			return nil, nil, nil, err
		}
	}
	return rc, wc, rp, a.finish()
}

func readConcern(d bson.D) (*readconcern.ReadConcern, error) {
	a := newArgs("readConcern", d)
	rc := &readconcern.ReadConcern{Level: a.str("level")}
	return rc, a.finish()
}

func writeConcern(d bson.D) (*writeconcern.WriteConcern, error) {
	a := newArgs("writeConcern", d)
	wc := &writeconcern.WriteConcern{}
	if v, ok := a.take("w"); ok {
		switch w := v.(type) {
		case string:
			wc.W = w
		case int32, int64, float64:
			n, _ := toFloat(w)
			wc.W = int(n)
		default:
			return nil, fmt.Errorf("writeConcern.w: unsupported %s", show(v))
		}
	}
	if v, ok := a.take("journal"); ok {
		j, _ := v.(bool)
		wc.Journal = &j
	}
	if v, ok := a.take("wtimeoutMS"); ok {
		// The v2 driver dropped wtimeout in favour of timeoutMS; a non-zero value cannot be honoured.
		if n, _ := toFloat(v); n != 0 {
			return nil, fmt.Errorf("writeConcern.wtimeoutMS is not supported by the Go driver v2")
		}
	}
	return wc, a.finish()
}

func readPreference(d bson.D) (*readpref.ReadPref, error) {
	a := newArgs("readPreference", d)
	mode, err := readpref.ModeFromString(a.str("mode"))
	if err != nil {
		return nil, err
	}
	var ropts []readpref.Option
	if v, ok := a.take("maxStalenessSeconds"); ok {
		n, _ := toFloat(v)
		ropts = append(ropts, readpref.WithMaxStaleness(time.Duration(n)*time.Second))
	}
	if v, ok := a.take("hedge"); ok {
		if h, ok := v.(bson.D); ok {
			if en, ok := lookup(h, "enabled"); ok {
				b, _ := en.(bool)
				ropts = append(ropts, readpref.WithHedgeEnabled(b))
			}
		}
	}
	if _, ok := a.take("tagSets"); ok {
		return nil, fmt.Errorf("readPreference.tagSets is not supported by this runner")
	}
	if err := a.finish(); err != nil {
		return nil, err
	}
	return readpref.New(mode, ropts...)
}
