package embedmongo

import (
	"bytes"
	"slices"
	"sort"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/agg"
	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/collation"
	"github.com/bankd/bankd/embedmongo/internal/expr"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
	"github.com/bankd/bankd/embedmongo/internal/query"
	"github.com/bankd/bankd/embedmongo/internal/storage"
	"github.com/bankd/bankd/embedmongo/internal/update"
)

// writeError is one entry of a write command's writeErrors array.
type writeError struct {
	index int
	err   *mongoerr.Error
}

func writeErrorsArray(errs []writeError) bson.A {
	a := make(bson.A, 0, len(errs))
	for _, we := range errs {
		d := bson.D{{Key: "index", Value: int32(we.index)}, {Key: "code", Value: we.err.Code}}
		d = append(d, bson.E{Key: "errmsg", Value: we.err.Msg})
		d = append(d, we.err.Extra...)
		a = append(a, d)
	}
	return a
}

// prepareInsert puts _id first (generating an ObjectId when absent) and validates the document
// the way mongod does before storing it. raw is its encoding, for Tx.InsertEncoded.
func prepareInsert(doc bson.D) (out bson.D, raw []byte, err error) {
	idIdx := -1
	for i, e := range doc {
		if e.Key == "_id" {
			idIdx = i
			break
		}
	}
	if idIdx < 0 {
		out = make(bson.D, 0, len(doc)+1)
		out = append(out, bson.E{Key: "_id", Value: bson.NewObjectID()})
		out = append(out, doc...)
	} else if idIdx == 0 {
		out = doc
	} else {
		out = make(bson.D, 0, len(doc))
		out = append(out, doc[idIdx])
		out = append(out, doc[:idIdx]...)
		out = append(out, doc[idIdx+1:]...)
	}
	if err := validateID(out[0].Value); err != nil {
		return nil, nil, err
	}
	if raw, err = encodeStored(out); err != nil {
		return nil, nil, err
	}
	return out, raw, nil
}

func validateID(id any) error {
	switch id.(type) {
	case bson.A:
		return mongoerr.New(mongoerr.InvalidIdField, "The '_id' value cannot be of type array")
	case bson.Regex:
		return mongoerr.New(mongoerr.InvalidIdField, "can't use a regex for _id")
	case bson.Undefined:
		return mongoerr.New(mongoerr.InvalidIdField, "can't use a undefined for _id")
	case bson.D:
		return checkIDFields(id.(bson.D))
	}
	return nil
}

// checkIDFields rejects $-prefixed field names anywhere inside an _id document: mongod
// allows them at other places since 5.0, but never in _id.
func checkIDFields(d bson.D) error {
	for _, e := range d {
		if strings.HasPrefix(e.Key, "$") {
			return mongoerr.New(mongoerr.DollarPrefixedFieldName, "_id fields may not contain '$'-prefixed fields: %s is not valid for storage.", e.Key)
		}
		if sub, ok := e.Value.(bson.D); ok {
			if err := checkIDFields(sub); err != nil {
				return err
			}
		}
	}
	return nil
}

// encodeStored encodes a document about to be stored, within the size limit. The encoding goes
// to storage as it is: a write encodes its document once.
func encodeStored(doc bson.D) ([]byte, error) {
	b, err := bsonkit.Encode(doc)
	if err != nil {
		return nil, mongoerr.New(mongoerr.BadValue, "cannot encode document: %v", err)
	}
	if len(b) > MaxBSONObjectSize {
		return nil, mongoerr.New(mongoerr.BSONObjectTooLarge, "object to insert too large. size in bytes: %d, max size: %d", len(b), MaxBSONObjectSize)
	}
	return b, nil
}

// modifier is a compiled update: an operator/replacement document or a pipeline.
type modifier struct {
	upd      *update.Update
	pipeline []bson.D
	vars     expr.Vars

	touched []string // the top-level fields it may change, when known
	known   bool
}

func compileModifier(u any, arrayFilters []bson.D, vars expr.Vars) (*modifier, error) {
	switch x := u.(type) {
	case bson.D:
		upd, err := update.Compile(x, update.Options{ArrayFilters: arrayFilters, Vars: vars})
		if err != nil {
			return nil, err
		}
		return newModifier(&modifier{upd: upd, vars: vars}), nil
	case bson.A:
		if len(arrayFilters) > 0 {
			return nil, mongoerr.New(mongoerr.FailedToParse, "arrayFilters may not be specified for pipeline-style updates")
		}
		stages := make([]bson.D, 0, len(x))
		for _, s := range x {
			d, ok := s.(bson.D)
			if !ok {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "Each element of the 'pipeline' array must be an object")
			}
			stages = append(stages, d)
		}
		return newModifier(&modifier{pipeline: stages, vars: vars}), nil
	}
	return nil, mongoerr.New(mongoerr.FailedToParse, "Update argument must be either an object or an array")
}

func (m *modifier) isReplacement() bool { return m.upd != nil && m.upd.IsReplacement() }

func newModifier(m *modifier) *modifier {
	m.touched, m.known = m.topFieldsOf()
	return m
}

// topFields lists the top-level fields the update may change; known is false when any may.
func (m *modifier) topFields() (fields []string, known bool) { return m.touched, m.known }

// topFieldsOf works topFields out. A pipeline's $set/$addFields/$unset stages name theirs;
// other stages may change anything.
func (m *modifier) topFieldsOf() (fields []string, known bool) {
	if m.upd != nil {
		return m.upd.TopFields()
	}
	for _, st := range m.pipeline {
		if len(st) != 1 {
			return nil, false
		}
		switch st[0].Key {
		case "$set", "$addFields":
			spec, ok := st[0].Value.(bson.D)
			if !ok {
				return nil, false
			}
			for _, e := range spec {
				fields = append(fields, strings.SplitN(e.Key, ".", 2)[0])
			}
		case "$unset":
			switch v := st[0].Value.(type) {
			case string:
				fields = append(fields, strings.SplitN(v, ".", 2)[0])
			case bson.A:
				for _, x := range v {
					name, ok := x.(string)
					if !ok {
						return nil, false
					}
					fields = append(fields, strings.SplitN(name, ".", 2)[0])
				}
			default:
				return nil, false
			}
		default:
			return nil, false
		}
	}
	return fields, true
}

// apply computes the new version of doc; insert marks an upsert's new document. changed is
// false when the update leaves the document byte-for-byte as it was (nModified counts only real
// changes).
func (m *modifier) apply(doc bson.D, pos int, insert bool) (out bson.D, changed bool, err error) {
	switch {
	case m.upd != nil && !m.upd.IsReplacement():
		out, changed, err = m.upd.ApplyChanged(doc, pos, insert)
	case m.upd != nil:
		out, err = m.upd.Apply(doc, pos, insert)
		changed = err == nil && !sameDoc(doc, out)
	default:
		out, err = agg.ApplyUpdatePipeline(m.pipeline, bsonkit.CopyDoc(doc), m.vars)
		changed = err == nil && !sameDoc(doc, out)
	}
	if err != nil {
		return nil, false, err
	}
	if touched, known := m.topFields(); known && !slices.Contains(touched, "_id") {
		return out, changed, nil // _id is left as it was
	}
	oldID, hadID := bsonkit.Get(doc, "_id")
	newID, hasID := bsonkit.Get(out, "_id")
	switch {
	case hadID && !hasID:
		out = append(bson.D{{Key: "_id", Value: oldID}}, out...)
	case hadID && !sameValue(oldID, newID):
		return nil, false, mongoerr.New(mongoerr.ImmutableField, "Performing an update on the path '_id' would modify the immutable field '_id'")
	}
	return out, changed, nil
}

// sameValue is exact equality (type included), so NumberLong(1) → 1.0 counts as a change.
func sameValue(a, b any) bool {
	x, err1 := bsonkit.Encode(bson.D{{Key: "v", Value: a}})
	y, err2 := bsonkit.Encode(bson.D{{Key: "v", Value: b}})
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

func sameDoc(a, b bson.D) bool {
	x, err1 := bsonkit.Encode(a)
	y, err2 := bsonkit.Encode(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// updateSpec is one parsed update statement.
type updateSpec struct {
	filter  bson.D
	matcher *query.Matcher
	mod     *modifier
	multi   bool
	upsert  bool
	sort    *query.Sort

	collation *collation.Collation // nil = simple
	validator *validator           // nil = none
}

// updateResult is what one statement did.
type updateResult struct {
	matched, modified int
	upsertedID        any
	upserted          bool
	before, after     bson.D // for findAndModify: the (first) document before and after
}

// applyUpdate runs one update statement inside a collection write.
func applyUpdate(tx *storage.Tx, s *updateSpec) (updateResult, error) {
	var res updateResult
	found, err := tx.Find(indexFilter(s.filter, s.collation), s.matcher.Match)
	if err != nil {
		return res, err
	}
	if s.sort != nil && len(found) > 1 {
		sortDocs(found, s.sort)
	}
	if !s.multi && len(found) > 1 {
		found = found[:1]
	}
	for _, d := range found {
		_, pos, err := s.matcher.MatchPositional(d.Doc)
		if err != nil {
			return res, err
		}
		newDoc, changed, err := s.mod.apply(d.Doc, pos, false)
		if err != nil {
			return res, err
		}
		res.matched++
		if res.before == nil {
			res.before, res.after = d.Doc, newDoc
		}
		if !changed {
			continue
		}
		raw, err := encodeStored(newDoc)
		if err != nil {
			return res, err
		}
		if err := s.validator.check(d.Doc, newDoc); err != nil {
			return res, err
		}
		touched, known := s.mod.topFields()
		if err := tx.ReplaceEncoded(d.ID, raw, touched, known); err != nil {
			return res, err
		}
		res.modified++
	}
	if res.matched > 0 || !s.upsert {
		return res, nil
	}
	seed, err := query.UpsertSeed(s.filter)
	if err != nil {
		return res, err
	}
	var doc bson.D
	if s.mod.isReplacement() {
		doc, _, err = s.mod.apply(bson.D{}, -1, true)
		if err != nil {
			return res, err
		}
		if id, ok := bsonkit.Get(seed, "_id"); ok {
			if _, has := bsonkit.Get(doc, "_id"); !has {
				doc = append(bson.D{{Key: "_id", Value: id}}, doc...)
			}
		}
	} else {
		doc, _, err = s.mod.apply(seed, -1, true)
		if err != nil {
			return res, err
		}
	}
	doc, raw, err := prepareInsert(doc)
	if err != nil {
		return res, err
	}
	if err := s.validator.check(nil, doc); err != nil {
		return res, err
	}
	if _, err := tx.InsertEncoded(raw); err != nil {
		return res, err
	}
	res.upserted, res.upsertedID, res.after = true, doc[0].Value, doc
	return res, nil
}

func sortDocs(docs []storage.Doc, s *query.Sort) {
	sort.SliceStable(docs, func(i, j int) bool { return s.Compare(docs[i].Doc, docs[j].Doc) < 0 })
}
