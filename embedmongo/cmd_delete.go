package embedmongo

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/expr"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
	"github.com/bankd/bankd/embedmongo/internal/query"
	"github.com/bankd/bankd/embedmongo/internal/storage"
)

// cmdDelete: {delete: coll, deletes: [{q, limit: 0|1, hint}], ordered, let}.
func cmdDelete(c *cmdCtx) (bson.D, error) {
	name, err := c.collectionArg()
	if err != nil {
		return nil, err
	}
	stmts, present, err := c.arrayArg("deletes")
	if err != nil {
		return nil, err
	}
	if !present {
		return nil, mongoerr.New(40414, "BSON field 'delete.deletes' is missing but a required field")
	}
	if err := checkStmtFields("delete", "deletes", stmts, deleteStmtFields); err != nil {
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
	coll := c.srv.store.Collection(c.db, name)
	opts := collOptions(coll)
	if isView(opts) {
		return nil, errOnView(c.db, name)
	}
	var n int
	var errs []writeError
	for i, v := range stmts {
		stmt, ok := v.(bson.D)
		if !ok {
			return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'delete.deletes.%d' is the wrong type, expected type 'object'", i)
		}
		deleted, err := c.deleteStmt(coll, opts, stmt, vars)
		if err != nil {
			errs = append(errs, writeError{index: i, err: mongoerr.As(err)})
			if ordered {
				break
			}
			continue
		}
		n += deleted
	}
	r := bson.D{{Key: "n", Value: int32(n)}}
	if len(errs) > 0 {
		r = append(r, bson.E{Key: "writeErrors", Value: writeErrorsArray(errs)})
	}
	return r, nil
}

func (c *cmdCtx) deleteStmt(coll *storage.Collection, collOpts bson.D, stmt bson.D, vars expr.Vars) (int, error) {
	q, hasQ := lookup(stmt, "q")
	if !hasQ {
		return 0, mongoerr.New(40414, "BSON field 'delete.deletes.q' is missing but a required field")
	}
	filter, ok := q.(bson.D)
	if !ok && q != nil {
		return 0, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'delete.deletes.q' is the wrong type '%s', expected type 'object'", typeName(q))
	}
	limitV, hasLimit := lookup(stmt, "limit")
	if !hasLimit {
		return 0, mongoerr.New(40414, "BSON field 'delete.deletes.limit' is missing but a required field")
	}
	limit, _ := toInt(limitV)
	if limit != 0 && limit != 1 {
		return 0, mongoerr.New(mongoerr.FailedToParse, "The limit field in delete objects must be 0 or 1. Got %d", limit)
	}
	collArg, _ := lookup(stmt, "collation")
	collator, err := operationCollation(collArg, collOpts)
	if err != nil {
		return 0, err
	}
	m, err := query.Compile(filter, query.Options{Vars: vars, Collation: collator})
	if err != nil {
		return 0, err
	}
	if coll == nil {
		return 0, nil
	}
	hint, _ := lookup(stmt, "hint")
	if err := checkHintValue(hint, coll); err != nil {
		return 0, err
	}
	n := 0
	err = c.writeDeferred(coll, func(tx *storage.Tx) error {
		found, err := tx.Find(indexFilter(filter, collator), m.Match)
		if err != nil {
			return err
		}
		if limit == 1 && len(found) > 1 {
			found = found[:1]
		}
		for _, d := range found {
			if err := tx.Delete(d.ID); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}
