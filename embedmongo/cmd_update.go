package embedmongo

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/expr"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
	"github.com/bankd/bankd/embedmongo/internal/query"
	"github.com/bankd/bankd/embedmongo/internal/storage"
)

// cmdUpdate: {update: coll, updates: [{q, u, multi, upsert, arrayFilters, hint, c}], ordered, let}.
// Each statement is its own collection write: atomic per document, as in mongod.
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
	for i, v := range stmts {
		stmt, ok := v.(bson.D)
		if !ok {
			return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'update.updates.%d' is the wrong type, expected type 'object'", i)
		}
		res, err := c.runUpdateStmt(name, stmt, vars)
		if err != nil {
			errs = append(errs, writeError{index: i, err: mongoerr.As(err)})
			if ordered {
				break
			}
			continue
		}
		n += res.matched
		nModified += res.modified
		if res.upserted {
			n++
			upserted = append(upserted, bson.D{{Key: "index", Value: int32(i)}, {Key: "_id", Value: res.upsertedID}})
		}
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

func (c *cmdCtx) runUpdateStmt(name string, stmt bson.D, vars expr.Vars) (updateResult, error) {
	var res updateResult
	get := func(k string) any { v, _ := lookup(stmt, k); return v }
	filter, _ := get("q").(bson.D)
	if v, ok := lookup(stmt, "q"); ok && v != nil {
		if _, isDoc := v.(bson.D); !isDoc {
			return res, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'update.updates.q' is the wrong type '%s', expected type 'object'", typeName(v))
		}
	}
	u, hasU := lookup(stmt, "u")
	if !hasU {
		return res, mongoerr.New(40414, "BSON field 'update.updates.u' is missing but a required field")
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
			return res, err
		}
		for k, v := range extra {
			merged[k] = v
		}
		vars = merged
	}
	arrayFilters, err := arrayFiltersArg(get("arrayFilters"))
	if err != nil {
		return res, err
	}
	mod, err := compileModifier(u, arrayFilters, vars)
	if err != nil {
		return res, err
	}
	if multi && mod.isReplacement() {
		return res, mongoerr.New(mongoerr.FailedToParse, "multi update is not supported for replacement-style update")
	}
	var coll *storage.Collection
	if upsert {
		if coll, err = c.srv.store.CollectionOrCreate(c.db, name); err != nil {
			return res, err
		}
	} else if coll = c.srv.store.Collection(c.db, name); coll == nil {
		// Nothing to update, but the statement must still be valid.
		if _, err := operationCollation(get("collation"), nil); err != nil {
			return res, err
		}
		_, err := query.Compile(filter, query.Options{Vars: vars})
		return res, err
	}
	opts := collOptions(coll)
	if isView(opts) {
		return res, errOnView(c.db, name)
	}
	collator, err := operationCollation(get("collation"), opts)
	if err != nil {
		return res, err
	}
	m, err := query.Compile(filter, query.Options{Vars: vars, Collation: collator})
	if err != nil {
		return res, err
	}
	val, err := c.validatorFor(opts, vars)
	if err != nil {
		return res, err
	}
	spec := &updateSpec{filter: filter, matcher: m, mod: mod, multi: multi, upsert: upsert, collation: collator, validator: val}
	if err := checkHintValue(get("hint"), coll); err != nil {
		return res, err
	}
	err = c.writeDeferred(coll, func(tx *storage.Tx) error {
		var err error
		res, err = applyUpdate(tx, spec)
		return err
	})
	return res, err
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
