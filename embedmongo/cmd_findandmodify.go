package embedmongo

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
	"github.com/bankd/bankd/embedmongo/internal/query"
	"github.com/bankd/bankd/embedmongo/internal/storage"
)

// cmdFindAndModify: {findAndModify: coll, query, sort, update | remove, new, fields, upsert,
// arrayFilters, hint, let}. Find, modify and return happen inside one collection write, so
// the whole read-modify-write is atomic: this is what the bank's lease lock stands on.
func cmdFindAndModify(c *cmdCtx) (bson.D, error) {
	name, err := c.collectionArg()
	if err != nil {
		return nil, err
	}
	filter, err := c.docArg("query")
	if err != nil {
		return nil, err
	}
	sortSpec, err := c.docArg("sort")
	if err != nil {
		return nil, err
	}
	fields, err := c.docArg("fields")
	if err != nil {
		return nil, err
	}
	remove, err := c.boolArg("remove", false)
	if err != nil {
		return nil, err
	}
	returnNew, err := c.boolArg("new", false)
	if err != nil {
		return nil, err
	}
	upsert, err := c.boolArg("upsert", false)
	if err != nil {
		return nil, err
	}
	u, hasUpdate := c.arg("update")
	switch {
	case remove && hasUpdate:
		return nil, mongoerr.New(mongoerr.FailedToParse, "Cannot specify both an update and remove=true")
	case !remove && !hasUpdate:
		return nil, mongoerr.New(mongoerr.FailedToParse, "Either an update or remove=true must be specified")
	case remove && upsert:
		return nil, mongoerr.New(mongoerr.FailedToParse, "Cannot specify both upsert=true and remove=true")
	case remove && returnNew:
		return nil, mongoerr.New(mongoerr.FailedToParse, "Cannot specify both new=true and remove=true; 'remove' always returns the deleted document")
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
	collArg, _ := c.arg("collation")
	collator, err := operationCollation(collArg, opts)
	if err != nil {
		return nil, err
	}
	qopts := query.Options{Vars: vars, Collation: collator}
	m, err := query.Compile(filter, qopts)
	if err != nil {
		return nil, err
	}
	var srt *query.Sort
	if len(sortSpec) > 0 {
		if srt, err = query.CompileSortCollation(sortSpec, collator); err != nil {
			return nil, err
		}
	}
	var proj *query.Projection
	if fields != nil {
		if proj, err = query.CompileProjection(fields, qopts); err != nil {
			return nil, err
		}
	}
	var mod *modifier
	if !remove {
		v, _, err := c.arrayArg("arrayFilters")
		if err != nil {
			return nil, err
		}
		af, err := arrayFiltersArg(v)
		if err != nil {
			return nil, err
		}
		if mod, err = compileModifier(u, af, vars); err != nil {
			return nil, err
		}
	}
	var val *validator
	if !remove {
		if val, err = c.validatorFor(opts, vars); err != nil {
			return nil, err
		}
	}
	if upsert && coll == nil { // an upsert creates the collection, once the command is valid
		if coll, err = c.srv.store.CollectionOrCreate(c.db, name); err != nil {
			return nil, err
		}
	}
	if err := checkHint(c, coll); err != nil {
		return nil, err
	}
	lastError := bson.D{{Key: "n", Value: int32(0)}}
	var value any // nil → null
	if coll != nil {
		err = coll.Write(func(tx *storage.Tx) error {
			if remove {
				found, err := tx.Find(indexFilter(filter, collator), m.Match)
				if err != nil || len(found) == 0 {
					return err
				}
				if srt != nil {
					sortDocs(found, srt)
				}
				if err := tx.Delete(found[0].ID); err != nil {
					return err
				}
				lastError = bson.D{{Key: "n", Value: int32(1)}}
				value = found[0].Doc
				return nil
			}
			res, err := applyUpdate(tx, &updateSpec{filter: filter, matcher: m, mod: mod, upsert: upsert, sort: srt, collation: collator, validator: val})
			if err != nil {
				return err
			}
			switch {
			case res.upserted:
				lastError = bson.D{{Key: "n", Value: int32(1)}, {Key: "updatedExisting", Value: false}, {Key: "upserted", Value: res.upsertedID}}
				if returnNew {
					value = res.after
				}
			case res.matched > 0:
				lastError = bson.D{{Key: "n", Value: int32(1)}, {Key: "updatedExisting", Value: true}}
				value = res.before
				if returnNew {
					value = res.after
				}
			default:
				lastError = bson.D{{Key: "n", Value: int32(0)}, {Key: "updatedExisting", Value: false}}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if doc, ok := value.(bson.D); ok && proj != nil {
		_, pos, err := m.MatchPositional(doc)
		if err != nil {
			return nil, err
		}
		if value, err = proj.Apply(doc, pos); err != nil {
			return nil, err
		}
	}
	return bson.D{{Key: "lastErrorObject", Value: lastError}, {Key: "value", Value: value}}, nil
}
