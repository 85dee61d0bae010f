package embedmongo

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/expr"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
	"github.com/bankd/bankd/embedmongo/internal/query"
	"github.com/bankd/bankd/embedmongo/internal/storage"
)

// cmdUpdate: {update: coll, updates: [{q, u, multi, upsert, arrayFilters, hint, c}], ordered, let}.
// Each statement is its own unit, atomic per document, as in mongod; consecutive statements on
// one collection share a collection write (updateRun).
func cmdUpdate(c *cmdCtx) (bson.D, error) {
	name, err := c.collectionArg()
	if err != nil {
		return nil, err
	}
	stmts, present, err := c.arrayArg("updates")
	if err != nil {
		return nil, err
	}
	if !present {
		return nil, mongoerr.New(40414, "BSON field 'update.updates' is missing but a required field")
	}
	if len(stmts) > MaxWriteBatchSize {
		return nil, mongoerr.New(mongoerr.InvalidLength, "Write batch sizes must be between 1 and %d. Got %d operations.", MaxWriteBatchSize, len(stmts))
	}
	if err := checkStmtFields("update", "updates", stmts, updateStmtFields); err != nil {
		return nil, err
	}
	ordered, err := c.boolArg("ordered", true)
	if err != nil {
		return nil, err
	}
	let, err := c.docArg("let")
	if err != nil {
		return nil, err
	}
	vars, err := c.vars(let)
	if err != nil {
		return nil, err
	}
	var n, nModified int
	upserted := bson.A{}
	var errs []writeError
	record := func(i int, res updateResult, err error) (stop bool) {
		if err != nil {
			errs = append(errs, writeError{index: i, err: mongoerr.As(err)})
			return ordered
		}
		n += res.matched
		nModified += res.modified
		if res.upserted {
			n++
			upserted = append(upserted, bson.D{{Key: "index", Value: int32(i)}, {Key: "_id", Value: res.upsertedID}})
		}
		return false
	}
	// Consecutive statements on one collection are applied as one write (updateRun): one hold
	// of the collection's lock and one log record for many statements, rather than one each.
	run := &updateRun{}
	stopped := false
	for i, v := range stmts {
		stmt, ok := v.(bson.D)
		if !ok {
			return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'update.updates.%d' is the wrong type, expected type 'object'", i)
		}
		spec, coll, err := c.prepareUpdateStmt(name, stmt, vars)
		if err == nil && coll != nil && run.joins(coll) {
			run.add(i, spec)
			continue
		}
		stopped = run.flush(c, record)
		run = &updateRun{coll: coll}
		if stopped {
			break
		}
		if err != nil || coll == nil {
			if stopped = record(i, updateResult{}, err); stopped {
				break
			}
			continue
		}
		run.add(i, spec)
	}
	if !stopped {
		run.flush(c, record)
	}
	r := bson.D{{Key: "n", Value: int32(n)}, {Key: "nModified", Value: int32(nModified)}}
	if len(upserted) > 0 {
		r = append(r, bson.E{Key: "upserted", Value: upserted})
	}
	if len(errs) > 0 {
		r = append(r, bson.E{Key: "writeErrors", Value: writeErrorsArray(errs)})
	}
	return r, nil
}

// maxRunLength bounds the statements applied under one hold of a collection's lock, so that
// a large command does not keep other commands off the collection for long.
const maxRunLength = 64

// updateRun is a run of consecutive update statements on one collection, applied together in
// one collection write. Each statement is still its own atomic unit, as in mongod: a failing
// statement keeps what the others did. Applying them together only changes what another
// command can see in between, which mongod never promised.
type updateRun struct {
	coll  *storage.Collection
	index []int
	specs []*updateSpec
}

func (r *updateRun) joins(coll *storage.Collection) bool {
	return r.coll == coll && len(r.specs) < maxRunLength
}

func (r *updateRun) add(i int, spec *updateSpec) {
	r.index = append(r.index, i)
	r.specs = append(r.specs, spec)
}

// flush applies the run and reports each statement's outcome to record; it reports whether
// the command stops here.
func (r *updateRun) flush(c *cmdCtx, record func(int, updateResult, error) bool) bool {
	if len(r.specs) == 0 {
		return false
	}
	results := make([]updateResult, 0, len(r.specs))
	var failed error
	err := c.writeDeferred(r.coll, func(tx *storage.Tx) error {
		for _, spec := range r.specs {
			res, err := applyUpdate(tx, spec)
			if err != nil {
				failed = err
				break
			}
			results = append(results, res)
		}
		return nil
	})
	if err != nil { // the write failed as a whole: none of its statements happened
		for _, i := range r.index {
			if record(i, updateResult{}, err) {
				return true
			}
		}
		return false
	}
	for k, res := range results {
		record(r.index[k], res, nil)
	}
	if failed == nil {
		return false
	}
	k := len(results)
	if record(r.index[k], updateResult{}, failed) {
		return true
	}
	// Unordered: the statements after the failed one go on, in a run of their own.
	rest := &updateRun{coll: r.coll, index: r.index[k+1:], specs: r.specs[k+1:]}
	return rest.flush(c, record)
}

// prepareUpdateStmt parses and compiles one statement; coll is nil when there is nothing to
// update (no such collection: the statement was still checked).
func (c *cmdCtx) prepareUpdateStmt(name string, stmt bson.D, vars expr.Vars) (*updateSpec, *storage.Collection, error) {
	get := func(k string) any { v, _ := lookup(stmt, k); return v }
	filter, _ := get("q").(bson.D)
	if v, ok := lookup(stmt, "q"); ok && v != nil {
		if _, isDoc := v.(bson.D); !isDoc {
			return nil, nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'update.updates.q' is the wrong type '%s', expected type 'object'", typeName(v))
		}
	}
	u, hasU := lookup(stmt, "u")
	if !hasU {
		return nil, nil, mongoerr.New(40414, "BSON field 'update.updates.u' is missing but a required field")
	}
	multi := truthy(get("multi"))
	upsert := truthy(get("upsert"))
	if c2, ok := get("c").(bson.D); ok { // per-statement constants
		merged := expr.Vars{}
		for k, v := range vars {
			merged[k] = v
		}
		extra, err := c.vars(c2)
		if err != nil {
			return nil, nil, err
		}
		for k, v := range extra {
			merged[k] = v
		}
		vars = merged
	}
	arrayFilters, err := arrayFiltersArg(get("arrayFilters"))
	if err != nil {
		return nil, nil, err
	}
	mod, err := compileModifier(u, arrayFilters, vars)
	if err != nil {
		return nil, nil, err
	}
	if multi && mod.isReplacement() {
		return nil, nil, mongoerr.New(mongoerr.FailedToParse, "multi update is not supported for replacement-style update")
	}
	var coll *storage.Collection
	if upsert {
		if coll, err = c.srv.store.CollectionOrCreate(c.db, name); err != nil {
			return nil, nil, err
		}
	} else if coll = c.srv.store.Collection(c.db, name); coll == nil {
		// Nothing to update, but the statement must still be valid.
		if _, err := operationCollation(get("collation"), nil); err != nil {
			return nil, nil, err
		}
		_, err := query.Compile(filter, query.Options{Vars: vars})
		return nil, nil, err
	}
	opts := collOptions(coll)
	if isView(opts) {
		return nil, nil, errOnView(c.db, name)
	}
	collator, err := operationCollation(get("collation"), opts)
	if err != nil {
		return nil, nil, err
	}
	m, err := query.Compile(filter, query.Options{Vars: vars, Collation: collator})
	if err != nil {
		return nil, nil, err
	}
	val, err := c.validatorFor(opts, vars)
	if err != nil {
		return nil, nil, err
	}
	if err := checkHintValue(get("hint"), coll); err != nil {
		return nil, nil, err
	}
	spec := &updateSpec{filter: filter, matcher: m, mod: mod, multi: multi, upsert: upsert, collation: collator, validator: val}
	return spec, coll, nil
}

func arrayFiltersArg(v any) ([]bson.D, error) {
	if v == nil {
		return nil, nil
	}
	arr, ok := v.(bson.A)
	if !ok {
		return nil, mongoerr.New(mongoerr.TypeMismatch, "arrayFilters must be an array")
	}
	out := make([]bson.D, 0, len(arr))
	for _, f := range arr {
		d, ok := f.(bson.D)
		if !ok {
			return nil, mongoerr.New(mongoerr.TypeMismatch, "arrayFilters must be an array of objects")
		}
		out = append(out, d)
	}
	return out, nil
}

func truthy(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case int32:
		return x != 0
	case int64:
		return x != 0
	case float64:
		return x != 0
	}
	return false
}
