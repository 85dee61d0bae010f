// Package spectest runs MongoDB's unified-test-format specification tests (the CRUD set) against
// a server, through the official Go driver only, so that the same files can be run against
// embedmongo and against a real mongod and the answers compared.
package spectest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readconcern"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"
)

// operationTimeout bounds each operation so that a hung server fails a test instead of the run.
const operationTimeout = 30 * time.Second

// watchdog cancels ctx after operationTimeout without giving it a deadline: the driver turns
// a deadline into a maxTimeMS field, which would change the commands the tests assert.
func watchdog(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	t := time.AfterFunc(operationTimeout, cancel)
	return ctx, func() { t.Stop(); cancel() }
}

// Runner holds the connection to the server under test.
type Runner struct {
	uri      string
	internal *mongo.Client
	info     ServerInfo
}

// NewRunner connects the internal client and reads the server's version and topology.
func NewRunner(ctx context.Context, uri string) (*Runner, error) {
	client, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		return nil, err
	}
	lb := false
	if u, err := url.Parse(uri); err == nil {
		lb = strings.EqualFold(u.Query().Get("loadBalanced"), "true")
	}
	pctx, cancel := context.WithTimeout(ctx, operationTimeout)
	defer cancel()
	info, err := probeServer(pctx, client, lb)
	if err != nil {
		_ = client.Disconnect(ctx)
		return nil, err
	}
	return &Runner{uri: uri, internal: client, info: info}, nil
}

// Info is the server description used for runOnRequirements.
func (r *Runner) Info() ServerInfo { return r.info }

// Close disconnects the internal client.
func (r *Runner) Close(ctx context.Context) error { return r.internal.Disconnect(ctx) }

// Status is a test's result.
type Status int

// Test statuses.
const (
	Passed Status = iota
	Failed
	Skipped
)

// Result is the outcome of one test.
type Result struct {
	File, Test string
	Status     Status
	// Reason says why a test was skipped or failed.
	Reason string
}

// SkipReason returns why test t of file f does not run on this server, or "".
func (r *Runner) SkipReason(f *File, t *Test) string {
	if why := r.info.satisfied(f.RunOnRequirements); why != "" {
		return "file runOnRequirements: " + why
	}
	if why := r.info.satisfied(t.RunOnRequirements); why != "" {
		return "runOnRequirements: " + why
	}
	if t.SkipReason != nil {
		return "skipReason: " + *t.SkipReason
	}
	return ""
}

// RunTest runs one test of a file.
func (r *Runner) RunTest(ctx context.Context, f *File, t *Test) Result {
	res := Result{File: f.Name(), Test: t.Description}
	if why := r.SkipReason(f, t); why != "" {
		res.Status, res.Reason = Skipped, why
		return res
	}
	tr := &testRun{runner: r, file: f, test: t, entities: newEntityMap()}
	err := tr.run(ctx)
	if err != nil {
		res.Status, res.Reason = Failed, err.Error()
	}
	return res
}

// testRun is the state of one test: its entities and configured fail points.
type testRun struct {
	runner     *Runner
	file       *File
	test       *Test
	entities   *entityMap
	failPoints []string
}

func (tr *testRun) matcher() matcher { return matcher{entities: tr.entities} }

func (tr *testRun) run(ctx context.Context) (err error) {
	r := tr.runner
	if err := r.loadData(ctx, tr.file.InitialData); err != nil {
		return fmt.Errorf("initialData: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), operationTimeout)
		defer cancel()
		if ferr := tr.disableFailPoints(cctx); ferr != nil && err == nil {
			err = ferr
		}
		tr.entities.close(cctx)
	}()
	if err := r.createEntities(ctx, tr.entities, tr.file.CreateEntities); err != nil {
		return fmt.Errorf("createEntities: %w", err)
	}
	for i, op := range tr.test.Operations {
		if err := tr.runOperation(ctx, op); err != nil {
			return fmt.Errorf("operation %d (%s on %s): %w", i, op.Name, op.Object, err)
		}
	}
	observed := map[string][]observedEvent{}
	for id, c := range tr.entities.clients {
		observed[id] = c.stopRecording()
	}
	// Fail points are disabled before events and outcome are checked, as the spec orders it.
	cctx, cancel := context.WithTimeout(ctx, operationTimeout)
	defer cancel()
	if err := tr.disableFailPoints(cctx); err != nil {
		return err
	}
	if err := tr.checkEvents(observed); err != nil {
		return err
	}
	for _, cd := range tr.test.Outcome {
		if err := r.checkOutcome(cctx, cd); err != nil {
			return fmt.Errorf("outcome %s.%s: %w", cd.DatabaseName, cd.CollectionName, err)
		}
	}
	return nil
}

func (tr *testRun) runOperation(ctx context.Context, op operation) error {
	ctx, cancel := watchdog(ctx)
	defer cancel()
	if op.Object == "testRunner" {
		return tr.specialOperation(ctx, op)
	}
	a := newArgs(op.Name, op.Arguments)
	if a.has("session") {
		name := a.str("session")
		s, ok := tr.entities.sessions[name]
		if !ok {
			return fmt.Errorf("unknown session entity %q", name)
		}
		ctx = mongo.NewSessionContext(ctx, s)
	}
	var res opResult
	var err error
	switch {
	case tr.entities.collections[op.Object] != nil:
		res, err = tr.collectionOp(ctx, tr.entities.collections[op.Object], op.Name, a)
	case tr.entities.databases[op.Object] != nil:
		res, err = tr.databaseOp(ctx, tr.entities.databases[op.Object], op.Name, a)
	case tr.entities.clients[op.Object] != nil:
		res, err = tr.clientOp(ctx, tr.entities.clients[op.Object].client, op.Name, a)
	default:
		return fmt.Errorf("unknown entity %q", op.Object)
	}
	if err != nil { // the runner could not run the operation at all
		return err
	}
	if op.IgnoreResultAndError {
		return nil
	}
	if op.ExpectError != nil {
		return tr.checkError(op.ExpectError, res)
	}
	if res.err != nil {
		return fmt.Errorf("unexpected error: %v", res.err)
	}
	if op.ExpectResult.Type != 0 {
		if err := tr.matchResult(rawToAny(op.ExpectResult), res); err != nil {
			return fmt.Errorf("result mismatch: %w\n    got result: %s", err, show(res.value))
		}
	}
	if op.SaveResultAsEntity != "" {
		if tr.entities.exists(op.SaveResultAsEntity) {
			return fmt.Errorf("saveResultAsEntity: entity %q already exists", op.SaveResultAsEntity)
		}
		tr.entities.values[op.SaveResultAsEntity] = res.value
	}
	return nil
}

func (tr *testRun) clientOp(ctx context.Context, client *mongo.Client, name string, a *args) (opResult, error) {
	switch name {
	case "clientBulkWrite":
		return clientBulkWrite(ctx, client, a)
	}
	return opResult{}, fmt.Errorf("unsupported client operation %q", name)
}

// matchResult matches an operation's result; cursor results are arrays of root documents.
func (tr *testRun) matchResult(expected any, res opResult) error {
	m := tr.matcher()
	if exp, ok := expected.(bson.A); ok && res.rootDocs {
		act, _ := res.value.(bson.A)
		if len(act) != len(exp) {
			return fmt.Errorf("expected %d documents %s, got %d %s", len(exp), show(exp), len(act), show(act))
		}
		for i := range exp {
			if err := m.matchAt(fmt.Sprintf("$[%d]", i), exp[i], act[i], true); err != nil {
				return err
			}
		}
		return nil
	}
	return m.match(expected, res.value, res.rootDoc)
}

func (tr *testRun) specialOperation(ctx context.Context, op operation) error {
	a := newArgs(op.Name, op.Arguments)
	switch op.Name {
	case "failPoint":
		if name := a.str("client"); tr.entities.clients[name] == nil {
			return fmt.Errorf("unknown client entity %q", name)
		}
		fp, ok := a.doc("failPoint")
		if err := a.finish(); err != nil {
			return err
		}
		if !ok || len(fp) == 0 || fp[0].Key != "configureFailPoint" {
			return fmt.Errorf("failPoint must be a configureFailPoint command, got %s", show(fp))
		}
		// The fail point is set through the internal client: on the single server the runner
		// talks to it is the same server, and its command stays out of the entity's events.
		if err := tr.runner.internal.Database("admin").RunCommand(ctx, fp).Err(); err != nil {
			return fmt.Errorf("configureFailPoint: %w", err)
		}
		name, _ := fp[0].Value.(string)
		tr.failPoints = append(tr.failPoints, name)
		return nil
	}
	return fmt.Errorf("unsupported testRunner operation %q", op.Name)
}

func (tr *testRun) disableFailPoints(ctx context.Context) error {
	var errs []error
	for _, name := range tr.failPoints {
		cmd := bson.D{{Key: "configureFailPoint", Value: name}, {Key: "mode", Value: "off"}}
		if err := tr.runner.internal.Database("admin").RunCommand(ctx, cmd).Err(); err != nil {
			errs = append(errs, fmt.Errorf("disable fail point %s: %w", name, err))
		}
	}
	tr.failPoints = nil
	return errors.Join(errs...)
}

// loadData sets up initialData with the internal client and a majority write concern.
func (r *Runner) loadData(ctx context.Context, data []collectionData) error {
	ctx, cancel := context.WithTimeout(ctx, operationTimeout)
	defer cancel()
	wc := options.Database().SetWriteConcern(writeconcern.Majority())
	for _, cd := range data {
		db := r.internal.Database(cd.DatabaseName, wc)
		for _, name := range []string{cd.CollectionName, "enxcol_." + cd.CollectionName + ".esc", "enxcol_." + cd.CollectionName + ".ecoc"} {
			if err := db.Collection(name).Drop(ctx); err != nil {
				return fmt.Errorf("drop %s.%s: %w", cd.DatabaseName, name, err)
			}
		}
		if cd.CreateOptions != nil {
			cmd := append(bson.D{{Key: "create", Value: cd.CollectionName}}, cd.CreateOptions...)
			cmd = append(cmd, bson.E{Key: "writeConcern", Value: bson.D{{Key: "w", Value: "majority"}}})
			if err := db.RunCommand(ctx, cmd).Err(); err != nil {
				return fmt.Errorf("create %s.%s: %w", cd.DatabaseName, cd.CollectionName, err)
			}
		}
		if len(cd.Documents) > 0 {
			if _, err := db.Collection(cd.CollectionName).InsertMany(ctx, toAnySlice(cd.Documents)); err != nil {
				return fmt.Errorf("insert into %s.%s: %w", cd.DatabaseName, cd.CollectionName, err)
			}
		} else if cd.CreateOptions == nil {
			if err := db.CreateCollection(ctx, cd.CollectionName); err != nil {
				return fmt.Errorf("create %s.%s: %w", cd.DatabaseName, cd.CollectionName, err)
			}
		}
	}
	return nil
}

// checkOutcome compares a collection's contents, sorted by _id, exactly with the expected ones.
func (r *Runner) checkOutcome(ctx context.Context, cd collectionData) error {
	coll := r.internal.Database(cd.DatabaseName).Collection(cd.CollectionName,
		options.Collection().SetReadPreference(readpref.Primary()).SetReadConcern(readconcern.Local()))
	cur, err := coll.Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return fmt.Errorf("find: %w", err)
	}
	got := readAll(ctx, cur, nil)
	if got.err != nil {
		return fmt.Errorf("find: %w", got.err)
	}
	docs := got.value.(bson.A)
	if len(docs) != len(cd.Documents) {
		return fmt.Errorf("expected %d documents %s, got %d %s", len(cd.Documents), show(cd.Documents), len(docs), show(docs))
	}
	for i := range docs {
		if !exactEqual(cd.Documents[i], docs[i]) {
			return fmt.Errorf("document %d: expected %s, got %s", i, showTyped(cd.Documents[i]), showTyped(docs[i]))
		}
	}
	return nil
}

// showTyped renders canonical extended JSON so that numeric type differences are visible.
func showTyped(v any) string {
	b, err := bson.MarshalExtJSON(bson.D{{Key: "v", Value: v}}, true, false)
	if err != nil {
		return show(v)
	}
	return strings.TrimSuffix(strings.TrimPrefix(string(b), `{"v":`), "}")
}

// rawToAny decodes a RawValue into the value model (documents as bson.D, arrays as bson.A).
func rawToAny(rv bson.RawValue) any {
	var v any
	if err := bson.UnmarshalValue(rv.Type, rv.Value, &v); err != nil {
		return fmt.Sprintf("<undecodable %s: %v>", rv.Type, err)
	}
	return v
}
