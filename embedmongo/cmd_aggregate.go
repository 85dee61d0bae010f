package embedmongo

import (
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/agg"
	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/collation"
	"github.com/bankd/bankd/embedmongo/internal/expr"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
	"github.com/bankd/bankd/embedmongo/internal/query"
	"github.com/bankd/bankd/embedmongo/internal/storage"
)

// cmdAggregate: {aggregate: coll | 1, pipeline, cursor: {batchSize}, let, ...}.
func cmdAggregate(c *cmdCtx) (bson.D, error) {
	var name string
	dbLevel := false
	switch v := c.cmd[0].Value.(type) {
	case string:
		var err error
		if name, err = c.collectionArg(); err != nil {
			return nil, err
		}
	case int32, int64, float64:
		if n, _ := toInt(v); n != 1 {
			return nil, mongoerr.New(mongoerr.FailedToParse, "aggregate field must be a collection name or 1")
		}
		dbLevel = true
	default:
		return nil, mongoerr.New(mongoerr.FailedToParse, "aggregate field must be a collection name or 1")
	}
	pv, present, err := c.arrayArg("pipeline")
	if err != nil {
		return nil, err
	}
	if !present {
		return nil, mongoerr.New(40414, "BSON field 'aggregate.pipeline' is missing but a required field")
	}
	pipeline := make([]bson.D, 0, len(pv))
	for _, s := range pv {
		d, ok := s.(bson.D)
		if !ok {
			return nil, mongoerr.New(mongoerr.TypeMismatch, "Each element of the 'pipeline' array must be an object")
		}
		pipeline = append(pipeline, d)
	}
	cursorOpt, err := c.docArg("cursor")
	if err != nil {
		return nil, err
	}
	explain, _ := c.boolArg("explain", false)
	if _, ok := c.arg("cursor"); !ok && !explain {
		return nil, mongoerr.New(mongoerr.FailedToParse, "The 'cursor' option is required, except for aggregate with the explain argument")
	}
	var batchSize int64
	if v, ok := lookup(cursorOpt, "batchSize"); ok {
		batchSize, _ = toInt(v)
		if batchSize < 0 {
			return nil, mongoerr.New(mongoerr.BadValue, "Cursor batchSize must not be negative")
		}
	}
	let, err := c.docArg("let")
	if err != nil {
		return nil, err
	}
	vars, err := c.vars(let)
	if err != nil {
		return nil, err
	}
	var input []bson.D
	var collator *collation.Collation
	collArg, _ := c.arg("collation")
	ns := c.db + ".$cmd.aggregate"
	if dbLevel {
		if collator, err = operationCollation(collArg, nil); err != nil {
			return nil, err
		}
	} else {
		ns = c.db + "." + name
		coll := c.srv.store.Collection(c.db, name)
		if err := checkHint(c, coll); err != nil {
			return nil, err
		}
		opts := collOptions(coll)
		if collator, err = operationCollation(collArg, opts); err != nil {
			return nil, err
		}
		switch {
		case isView(opts):
			v, err := c.srv.resolveView(c.db, name)
			if err != nil {
				return nil, err
			}
			if input, err = c.srv.sourceDocs(c.db, v); err != nil {
				return nil, err
			}
			if collArg == nil {
				collator = v.collation
			}
			pipeline = append(v.pipeline[:len(v.pipeline):len(v.pipeline)], pipeline...)
		case coll != nil:
			// A leading $match narrows the scan (and may use an index).
			var filter bson.D
			match := storage.MatchFunc(matchAll)
			if len(pipeline) > 0 && len(pipeline[0]) == 1 && pipeline[0][0].Key == "$match" {
				if f, ok := pipeline[0][0].Value.(bson.D); ok {
					m, err := query.Compile(f, query.Options{Vars: vars, Collation: collator})
					if err != nil {
						return nil, err
					}
					filter, match = indexFilter(f, collator), m.Match
					pipeline = pipeline[1:]
				}
			}
			found, err := coll.Find(filter, match)
			if err != nil {
				return nil, err
			}
			input = make([]bson.D, len(found))
			for i, d := range found {
				input[i] = d.Doc
			}
		}
	}
	out, err := agg.Run(pipeline, input, agg.Options{DB: c.db, Vars: vars, Env: &aggEnv{srv: c.srv}, Collation: collator})
	if err != nil {
		return nil, err
	}
	return c.srv.cursorReply(ns, out, batchSize, false), nil
}

// aggEnv gives pipelines access to other collections ($lookup, $unionWith, $out, $merge).
type aggEnv struct{ srv *Server }

func (e *aggEnv) Docs(db, coll string) ([]bson.D, error) {
	cl := e.srv.store.Collection(db, coll)
	if cl == nil {
		return nil, nil
	}
	if isView(collOptions(cl)) {
		v, err := e.srv.resolveView(db, coll)
		if err != nil {
			return nil, err
		}
		return e.srv.viewDocs(db, v, expr.Vars{"NOW": bson.NewDateTimeFromTime(time.Now())})
	}
	found, err := cl.Find(nil, func(bson.D) (bool, error) { return true, nil })
	if err != nil {
		return nil, err
	}
	out := make([]bson.D, len(found))
	for i, d := range found {
		out[i] = d.Doc
	}
	return out, nil
}

// ReplaceCollection swaps db.coll's contents for docs in one write; on any error the old
// contents are put back, so $out is all or nothing.
func (e *aggEnv) ReplaceCollection(db, coll string, docs []bson.D) error {
	if err := validateCollectionName(db, coll); err != nil {
		return err
	}
	cl, err := e.srv.store.CollectionOrCreate(db, coll)
	if err != nil {
		return err
	}
	if isView(collOptions(cl)) {
		return errOnView(db, coll)
	}
	prepared := make([]bson.D, len(docs))
	for i, d := range docs {
		if prepared[i], _, err = prepareInsert(d); err != nil {
			return err
		}
	}
	return cl.Write(func(tx *storage.Tx) error {
		old, err := tx.Find(nil, func(bson.D) (bool, error) { return true, nil })
		if err != nil {
			return err
		}
		for _, d := range old {
			if err := tx.Delete(d.ID); err != nil {
				return err
			}
		}
		var inserted []storage.RecordID
		for _, d := range prepared {
			id, err := tx.Insert(d)
			if err != nil {
				for _, r := range inserted {
					_ = tx.Delete(r)
				}
				for _, d := range old {
					_, _ = tx.Insert(d.Doc)
				}
				return err
			}
			inserted = append(inserted, id)
		}
		return nil
	})
}

func (e *aggEnv) FindOne(db, coll string, filter bson.D) (bson.D, error) {
	cl := e.srv.store.Collection(db, coll)
	if cl == nil {
		return nil, nil
	}
	m, err := query.Compile(filter, query.Options{})
	if err != nil {
		return nil, err
	}
	found, err := cl.Find(filter, m.Match)
	if err != nil || len(found) == 0 {
		return nil, err
	}
	return found[0].Doc, nil
}

func (e *aggEnv) Insert(db, coll string, doc bson.D) error {
	if err := validateCollectionName(db, coll); err != nil {
		return err
	}
	cl, err := e.srv.store.CollectionOrCreate(db, coll)
	if err != nil {
		return err
	}
	if isView(collOptions(cl)) {
		return errOnView(db, coll)
	}
	_, raw, err := prepareInsert(doc)
	if err != nil {
		return err
	}
	return cl.Write(func(tx *storage.Tx) error { _, err := tx.InsertEncoded(raw); return err })
}

func (e *aggEnv) Replace(db, coll string, id any, doc bson.D) error {
	cl := e.srv.store.Collection(db, coll)
	if cl == nil {
		return mongoerr.New(mongoerr.NamespaceNotFound, "ns does not exist: %s.%s", db, coll)
	}
	if isView(collOptions(cl)) {
		return errOnView(db, coll)
	}
	filter := bson.D{{Key: "_id", Value: id}}
	return cl.Write(func(tx *storage.Tx) error {
		found, err := tx.Find(filter, func(d bson.D) (bool, error) {
			v, _ := bsonkit.Get(d, "_id")
			return bsonkit.Equal(v, id), nil
		})
		if err != nil || len(found) == 0 {
			return err
		}
		if _, has := bsonkit.Get(doc, "_id"); !has {
			doc = append(bson.D{{Key: "_id", Value: id}}, doc...)
		}
		return tx.Replace(found[0].ID, doc)
	})
}
