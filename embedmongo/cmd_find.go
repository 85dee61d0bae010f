package embedmongo

import (
	"sort"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/collation"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
	"github.com/bankd/bankd/embedmongo/internal/query"
	"github.com/bankd/bankd/embedmongo/internal/storage"
)

// selection is a parsed filter + sort + skip/limit + projection over one collection.
type selection struct {
	filter     bson.D
	matcher    *query.Matcher
	sort       *query.Sort
	projection *query.Projection
	skip       int64
	limit      int64 // 0 = none
}

func (sel *selection) finish(found []storage.Doc) ([]bson.D, error) {
	if sel.sort != nil {
		sortDocs(found, sel.sort)
	}
	if sel.skip > 0 {
		if sel.skip >= int64(len(found)) {
			found = nil
		} else {
			found = found[sel.skip:]
		}
	}
	if sel.limit > 0 && int64(len(found)) > sel.limit {
		found = found[:sel.limit]
	}
	out := make([]bson.D, len(found))
	for i, d := range found {
		doc := d.Doc
		if sel.projection != nil {
			_, pos, err := sel.matcher.MatchPositional(doc)
			if err != nil {
				return nil, err
			}
			if doc, err = sel.projection.Apply(doc, pos); err != nil {
				return nil, err
			}
		}
		out[i] = doc
	}
	return out, nil
}

func newSelection(filter, sortSpec, projection bson.D, opts query.Options) (*selection, error) {
	sel := &selection{filter: filter}
	var err error
	if sel.matcher, err = query.Compile(filter, opts); err != nil {
		return nil, err
	}
	if len(sortSpec) > 0 {
		if sel.sort, err = query.CompileSortCollation(sortSpec, opts.Collation); err != nil {
			return nil, err
		}
	}
	if projection != nil {
		if sel.projection, err = query.CompileProjection(projection, opts); err != nil {
			return nil, err
		}
	}
	return sel, nil
}

func cmdFind(c *cmdCtx) (bson.D, error) {
	name, err := c.collectionArg()
	if err != nil {
		return nil, err
	}
	filter, err := c.docArg("filter")
	if err != nil {
		return nil, err
	}
	sortSpec, err := c.docArg("sort")
	if err != nil {
		return nil, err
	}
	projection, err := c.docArg("projection")
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
	skip, err := c.intArg("skip", 0)
	if err != nil {
		return nil, err
	}
	if skip < 0 {
		return nil, mongoerr.New(51024, "BSON field 'skip' value must be >= 0, actual value '%d'", skip)
	}
	limit, err := c.intArg("limit", 0)
	if err != nil {
		return nil, err
	}
	batchSize, err := c.intArg("batchSize", 0)
	if err != nil {
		return nil, err
	}
	if batchSize < 0 {
		return nil, mongoerr.New(51024, "BSON field 'batchSize' value must be >= 0, actual value '%d'", batchSize)
	}
	singleBatch, err := c.boolArg("singleBatch", false)
	if err != nil {
		return nil, err
	}
	if limit < 0 { // legacy negative limit: one batch of |limit|
		limit, singleBatch = -limit, true
	}
	coll := c.srv.store.Collection(c.db, name)
	opts := collOptions(coll)
	collArg, _ := c.arg("collation")
	collator, err := operationCollation(collArg, opts)
	if err != nil {
		return nil, err
	}
	sel, err := newSelection(filter, sortSpec, projection, query.Options{Vars: vars, Collation: collator})
	if err != nil {
		return nil, err
	}
	sel.skip, sel.limit = skip, limit
	if err := checkHint(c, coll); err != nil {
		return nil, err
	}
	found, err := c.scan(name, coll, opts, indexFilter(filter, collator), sel.matcher.Match, vars)
	if err != nil {
		return nil, err
	}
	docs, err := sel.finish(found)
	if err != nil {
		return nil, err
	}
	return c.srv.cursorReply(c.db+"."+name, docs, batchSize, singleBatch), nil
}

// checkHint rejects a hint naming no index, as mongod's planner does.
func checkHint(c *cmdCtx, coll *storage.Collection) error {
	h, ok := c.arg("hint")
	if !ok {
		return nil
	}
	return checkHintValue(h, coll)
}

func checkHintValue(h any, coll *storage.Collection) error {
	if coll == nil || h == nil {
		return nil
	}
	switch x := h.(type) {
	case string:
		if x == "" {
			return nil
		}
		for _, ix := range coll.Indexes() {
			if ix.Name == x {
				return nil
			}
		}
	case bson.D:
		if len(x) == 0 {
			return nil
		}
		if len(x) == 1 && x[0].Key == "$natural" {
			return nil
		}
		for _, ix := range coll.Indexes() {
			if bsonkit.Equal(ix.Key, x) {
				return nil
			}
		}
	default:
		return mongoerr.New(mongoerr.FailedToParse, "hint must be a string or an object")
	}
	return mongoerr.New(mongoerr.BadValue, "error processing query: planner returned error :: caused by :: hint provided does not correspond to an existing index")
}

func cmdCount(c *cmdCtx) (bson.D, error) {
	name, err := c.collectionArg()
	if err != nil {
		return nil, err
	}
	filter, err := c.docArg("query")
	if err != nil {
		return nil, err
	}
	skip, err := c.intArg("skip", 0)
	if err != nil {
		return nil, err
	}
	limit, err := c.intArg("limit", 0)
	if err != nil {
		return nil, err
	}
	if skip < 0 {
		return nil, mongoerr.New(mongoerr.FailedToParse, "skip value is negative in count query")
	}
	if limit < 0 {
		limit = -limit
	}
	coll := c.srv.store.Collection(c.db, name)
	if err := checkHint(c, coll); err != nil {
		return nil, err
	}
	opts := collOptions(coll)
	var n int64
	if coll != nil {
		if len(filter) == 0 && !isView(opts) {
			n = coll.Count()
		} else {
			vars, err := c.vars(nil)
			if err != nil {
				return nil, err
			}
			collArg, _ := c.arg("collation")
			collator, err := operationCollation(collArg, opts)
			if err != nil {
				return nil, err
			}
			m, err := query.Compile(filter, query.Options{Vars: vars, Collation: collator})
			if err != nil {
				return nil, err
			}
			found, err := c.scan(name, coll, opts, indexFilter(filter, collator), m.Match, vars)
			if err != nil {
				return nil, err
			}
			n = int64(len(found))
		}
	}
	n = max(n-skip, 0)
	if limit > 0 && n > limit {
		n = limit
	}
	return bson.D{{Key: "n", Value: int32(n)}}, nil
}

func cmdDistinct(c *cmdCtx) (bson.D, error) {
	name, err := c.collectionArg()
	if err != nil {
		return nil, err
	}
	keyV, ok := c.arg("key")
	key, isStr := keyV.(string)
	if !ok || !isStr {
		return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'distinct.key' is missing or not a string")
	}
	if key == "" {
		return nil, mongoerr.New(mongoerr.BadValue, "FieldPath cannot be constructed with empty string")
	}
	filter, err := c.docArg("query")
	if err != nil {
		return nil, err
	}
	vars, err := c.vars(nil)
	if err != nil {
		return nil, err
	}
	coll := c.srv.store.Collection(c.db, name)
	opts := collOptions(coll)
	collArg, _ := c.arg("collation")
	collator, err := operationCollation(collArg, opts)
	if err != nil {
		return nil, err
	}
	m, err := query.Compile(filter, query.Options{Vars: vars, Collation: collator})
	if err != nil {
		return nil, err
	}
	if err := checkHint(c, coll); err != nil {
		return nil, err
	}
	values := bson.A{}
	found, err := c.scan(name, coll, opts, indexFilter(filter, collator), m.Match, vars)
	if err != nil {
		return nil, err
	}
	for _, d := range found {
		for _, v := range valuesAtPath(d.Doc, strings.Split(key, ".")) {
			if arr, ok := v.(bson.A); ok {
				for _, e := range arr {
					values = appendDistinct(values, e, collator)
				}
				continue
			}
			values = appendDistinct(values, v, collator)
		}
	}
	sort.SliceStable(values, func(i, j int) bool { return collator.Compare(values[i], values[j]) < 0 })
	return bson.D{{Key: "values", Value: values}}, nil
}

// appendDistinct adds v unless an equal value (under the collation) is already there: the
// first one met represents them all, as in mongod.
func appendDistinct(vals bson.A, v any, coll *collation.Collation) bson.A {
	for _, x := range vals {
		if coll.Compare(x, v) == 0 {
			return vals
		}
	}
	return append(vals, v)
}

// valuesAtPath collects the values at a dotted path, traversing arrays of documents implicitly.
func valuesAtPath(v any, parts []string) []any {
	if len(parts) == 0 {
		return []any{v}
	}
	switch x := v.(type) {
	case bson.D:
		val, ok := bsonkit.Get(x, parts[0])
		if !ok {
			return nil
		}
		return valuesAtPath(val, parts[1:])
	case bson.A:
		if i, ok := bsonkit.ArrayIndex(parts[0]); ok {
			if i < len(x) {
				return valuesAtPath(x[i], parts[1:])
			}
			return nil
		}
		var out []any
		for _, e := range x {
			if _, isDoc := e.(bson.D); isDoc {
				out = append(out, valuesAtPath(e, parts)...)
			}
		}
		return out
	}
	return nil
}
