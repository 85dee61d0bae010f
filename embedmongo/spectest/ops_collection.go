package spectest

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readconcern"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/xoptions"
)

// opResult is what an operation produced, ready for matching.
type opResult struct {
	value any
	// rootDocs: value is an array of documents from a cursor, each matched as a root document.
	rootDocs bool
	// rootDoc: value is a document matched as a root document.
	rootDoc bool
	err     error
}

func docResult(v any, err error) opResult { return opResult{value: v, rootDoc: true, err: err} }

func (tr *testRun) collectionOp(ctx context.Context, coll *mongo.Collection, name string, a *args) (opResult, error) {
	switch name {
	case "aggregate":
		return aggregate(ctx, a, func(p any, o *options.AggregateOptionsBuilder) (*mongo.Cursor, error) {
			return coll.Aggregate(ctx, p, o)
		})
	case "bulkWrite":
		return tr.bulkWrite(ctx, coll, a)
	case "find":
		return tr.find(ctx, coll, a)
	case "findOne":
		return findOne(ctx, coll, a)
	case "countDocuments":
		return countDocuments(ctx, coll, a)
	case "estimatedDocumentCount":
		return estimatedDocumentCount(ctx, coll, tr.entities.readConcerns[coll], a)
	case "count":
		return tr.countCommand(ctx, coll, tr.entities.readConcerns[coll], a)
	case "distinct":
		return distinct(ctx, coll, a)
	case "insertOne":
		return insertOne(ctx, coll, a)
	case "insertMany":
		return insertMany(ctx, coll, a)
	case "updateOne", "updateMany", "replaceOne":
		return tr.updateOp(ctx, coll, name, a)
	case "deleteOne", "deleteMany":
		return tr.deleteOp(ctx, coll, name, a)
	case "findOneAndUpdate", "findOneAndReplace", "findOneAndDelete":
		return tr.findAndModify(ctx, coll, name, a)
	case "createIndex":
		return createIndex(ctx, coll, a)
	case "drop":
		if err := a.finish(); err != nil {
			return opResult{}, err
		}
		return opResult{value: absent, err: coll.Drop(ctx)}, nil
	}
	return opResult{}, fmt.Errorf("unsupported collection operation %q", name)
}

// readAll fully iterates a cursor, as the spec requires for find and aggregate.
func readAll(ctx context.Context, cur *mongo.Cursor, err error) opResult {
	if err != nil {
		return opResult{err: err}
	}
	defer cur.Close(ctx)
	docs := bson.A{}
	for cur.Next(ctx) {
		var d bson.D
		if err := bson.Unmarshal(cur.Current, &d); err != nil {
			return opResult{err: err}
		}
		docs = append(docs, d)
	}
	if err := cur.Err(); err != nil {
		return opResult{err: err}
	}
	return opResult{value: docs, rootDocs: true}
}

func aggregate(ctx context.Context, a *args, run func(any, *options.AggregateOptionsBuilder) (*mongo.Cursor, error)) (opResult, error) {
	o := options.Aggregate()
	pipeline := a.array("pipeline")
	if pipeline == nil {
		a.fail("pipeline is required")
	}
	if v, ok := a.take("allowDiskUse"); ok {
		b, _ := v.(bool)
		o.SetAllowDiskUse(b)
	}
	if n, ok := a.int64("batchSize"); ok {
		o.SetBatchSize(int32(n))
	}
	if a.has("bypassDocumentValidation") {
		b := a.boolean("bypassDocumentValidation")
		o.SetBypassDocumentValidation(b)
		if _, ok := bypassFalse(&b); ok {
			o.SetCustom(bson.M{"bypassDocumentValidation": false})
		}
	}
	if c, ok := a.collation("collation"); ok {
		o.SetCollation(c)
	}
	if v, ok := a.take("comment"); ok {
		o.SetComment(v)
	}
	if v, ok := a.take("hint"); ok {
		o.SetHint(v)
	}
	if v, ok := a.doc("let"); ok {
		o.SetLet(v)
	}
	if v, ok := a.take("rawData"); ok {
		if err := xoptions.SetInternalAggregateOptions(o, "rawData", v); err != nil {
			return opResult{}, err
		}
	}
	if err := a.finish(); err != nil {
		return opResult{}, err
	}
	cur, err := run(pipeline, o)
	return readAll(ctx, cur, err), nil
}

func (tr *testRun) find(ctx context.Context, coll *mongo.Collection, a *args) (opResult, error) {
	o := options.Find()
	filter := a.docOrEmpty("filter")
	if v, ok := a.take("allowDiskUse"); ok {
		b, _ := v.(bool)
		o.SetAllowDiskUse(b)
	}
	batch, hasBatch := a.int64("batchSize")
	if hasBatch {
		o.SetBatchSize(int32(batch))
	}
	if c, ok := a.collation("collation"); ok {
		o.SetCollation(c)
	}
	if v, ok := a.take("comment"); ok {
		o.SetComment(v)
	}
	if v, ok := a.take("hint"); ok {
		o.SetHint(v)
	}
	if v, ok := a.doc("let"); ok {
		o.SetLet(v)
	}
	limit, hasLimit := a.int64("limit")
	if hasLimit {
		o.SetLimit(limit)
	}
	if n, ok := a.int64("skip"); ok {
		o.SetSkip(n)
	}
	if v, ok := a.doc("sort"); ok {
		o.SetSort(v)
	}
	if v, ok := a.doc("projection"); ok {
		o.SetProjection(v)
	}
	if v, ok := a.take("rawData"); ok {
		if err := xoptions.SetInternalFindOptions(o, "rawData", v); err != nil {
			return opResult{}, err
		}
	}
	if err := a.finish(); err != nil {
		return opResult{}, err
	}
	if hasLimit && hasBatch && limit > 0 && batch == limit {
		// The CRUD spec has drivers ask for one more document than the limit so that the
		// server closes the cursor after the first batch; driver v2 does not (GODRIVER-3395).
		o.SetBatchSize(int32(limit + 1))
	}
	cur, err := coll.Find(ctx, filter, o)
	return readAll(ctx, cur, err), nil
}

func findOne(ctx context.Context, coll *mongo.Collection, a *args) (opResult, error) {
	o := options.FindOne()
	filter := a.docOrEmpty("filter")
	if n, ok := a.int64("skip"); ok {
		o.SetSkip(n)
	}
	if v, ok := a.doc("sort"); ok {
		o.SetSort(v)
	}
	if v, ok := a.doc("projection"); ok {
		o.SetProjection(v)
	}
	if c, ok := a.collation("collation"); ok {
		o.SetCollation(c)
	}
	if v, ok := a.take("comment"); ok {
		o.SetComment(v)
	}
	if v, ok := a.take("hint"); ok {
		o.SetHint(v)
	}
	if err := a.finish(); err != nil {
		return opResult{}, err
	}
	return singleResult(coll.FindOne(ctx, filter, o)), nil
}

// singleResult converts a SingleResult: no document is a null result, not an error.
func singleResult(sr *mongo.SingleResult) opResult {
	raw, err := sr.Raw()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return docResult(nil, nil)
	}
	if err != nil {
		return opResult{err: err}
	}
	var d bson.D
	if err := bson.Unmarshal(raw, &d); err != nil {
		return opResult{err: err}
	}
	return docResult(d, nil)
}

func countDocuments(ctx context.Context, coll *mongo.Collection, a *args) (opResult, error) {
	o := options.Count()
	filter := a.docOrEmpty("filter")
	if c, ok := a.collation("collation"); ok {
		o.SetCollation(c)
	}
	if v, ok := a.take("comment"); ok {
		o.SetComment(v)
	}
	if v, ok := a.take("hint"); ok {
		o.SetHint(v)
	}
	if n, ok := a.int64("limit"); ok {
		o.SetLimit(n)
	}
	if n, ok := a.int64("skip"); ok {
		o.SetSkip(n)
	}
	if v, ok := a.take("rawData"); ok {
		if err := xoptions.SetInternalCountOptions(o, "rawData", v); err != nil {
			return opResult{}, err
		}
	}
	if err := a.finish(); err != nil {
		return opResult{}, err
	}
	n, err := coll.CountDocuments(ctx, filter, o)
	return opResult{value: n, err: err}, nil
}

func estimatedDocumentCount(ctx context.Context, coll *mongo.Collection, rc *readconcern.ReadConcern, a *args) (opResult, error) {
	o := options.EstimatedDocumentCount()
	comment, hasComment := a.take("comment")
	if hasComment {
		o.SetComment(comment)
	}
	if v, ok := a.take("rawData"); ok {
		if err := xoptions.SetInternalEstimatedDocumentCountOptions(o, "rawData", v); err != nil {
			return opResult{}, err
		}
	}
	maxTime, hasMaxTime := a.int64("maxTimeMS")
	if err := a.finish(); err != nil {
		return opResult{}, err
	}
	if hasMaxTime {
		// Driver v2 removed maxTimeMS; send the count command the CRUD spec prescribes for
		// estimatedDocumentCount ({count: <coll>}) with it.
		cmd := bson.D{{Key: "count", Value: coll.Name()}, {Key: "maxTimeMS", Value: maxTime}}
		if hasComment {
			cmd = append(cmd, bson.E{Key: "comment", Value: comment})
		}
		n, err := runCount(ctx, coll, rc, cmd)
		return opResult{value: n, err: err}, nil
	}
	n, err := coll.EstimatedDocumentCount(ctx, o)
	return opResult{value: n, err: err}, nil
}

// countCommand implements the deprecated count helper, which the Go driver v2 no longer has,
// by sending the count command as drivers did.
func (tr *testRun) countCommand(ctx context.Context, coll *mongo.Collection, rc *readconcern.ReadConcern, a *args) (opResult, error) {
	cmd := bson.D{{Key: "count", Value: coll.Name()}}
	if v, ok := a.doc("filter"); ok {
		cmd = append(cmd, bson.E{Key: "query", Value: v})
	}
	for _, k := range []string{"skip", "limit"} {
		if n, ok := a.int64(k); ok {
			cmd = append(cmd, bson.E{Key: k, Value: n})
		}
	}
	if v, ok := a.doc("collation"); ok {
		cmd = append(cmd, bson.E{Key: "collation", Value: v})
	}
	for _, k := range []string{"hint", "comment"} {
		if v, ok := a.take(k); ok {
			cmd = append(cmd, bson.E{Key: k, Value: v})
		}
	}
	// Like the driver's rawData option, it is only sent to servers that know it (8.2+).
	if v, ok := a.take("rawData"); ok && compareVersions(tr.runner.info.Version, [3]int{8, 2, 0}) >= 0 {
		cmd = append(cmd, bson.E{Key: "rawData", Value: v})
	}
	if err := a.finish(); err != nil {
		return opResult{}, err
	}
	n, err := runCount(ctx, coll, rc, cmd)
	return opResult{value: n, err: err}, nil
}

// runCount sends a count command with the collection entity's read concern, as the driver would.
func runCount(ctx context.Context, coll *mongo.Collection, rc *readconcern.ReadConcern, cmd bson.D) (int64, error) {
	if rc != nil && rc.Level != "" {
		cmd = append(cmd, bson.E{Key: "readConcern", Value: bson.D{{Key: "level", Value: rc.Level}}})
	}
	var reply struct {
		N int64 `bson:"n"`
	}
	err := coll.Database().RunCommand(ctx, cmd).Decode(&reply)
	return reply.N, err
}

func distinct(ctx context.Context, coll *mongo.Collection, a *args) (opResult, error) {
	o := options.Distinct()
	field := a.str("fieldName")
	filter := a.docOrEmpty("filter")
	if c, ok := a.collation("collation"); ok {
		o.SetCollation(c)
	}
	if v, ok := a.take("comment"); ok {
		o.SetComment(v)
	}
	if v, ok := a.take("hint"); ok {
		o.SetHint(v)
	}
	if v, ok := a.take("rawData"); ok {
		if err := xoptions.SetInternalDistinctOptions(o, "rawData", v); err != nil {
			return opResult{}, err
		}
	}
	if err := a.finish(); err != nil {
		return opResult{}, err
	}
	res := coll.Distinct(ctx, field, filter, o)
	if err := res.Err(); err != nil {
		return opResult{err: err}, nil
	}
	var vals bson.A
	if err := res.Decode(&vals); err != nil {
		return opResult{err: err}, nil
	}
	if vals == nil {
		vals = bson.A{}
	}
	return opResult{value: vals}, nil
}

func insertOne(ctx context.Context, coll *mongo.Collection, a *args) (opResult, error) {
	o := options.InsertOne()
	doc, _ := a.doc("document")
	if a.has("bypassDocumentValidation") {
		b := a.boolean("bypassDocumentValidation")
		o.SetBypassDocumentValidation(b)
		if extra, ok := bypassFalse(&b); ok {
			if err := xoptions.SetInternalInsertOneOptions(o, "addCommandFields", extra); err != nil {
				return opResult{}, err
			}
		}
	}
	if v, ok := a.take("comment"); ok {
		o.SetComment(v)
	}
	if v, ok := a.take("rawData"); ok {
		if err := xoptions.SetInternalInsertOneOptions(o, "rawData", v); err != nil {
			return opResult{}, err
		}
	}
	if err := a.finish(); err != nil {
		return opResult{}, err
	}
	res, err := coll.InsertOne(ctx, doc, o)
	if err != nil {
		return opResult{err: err}, nil
	}
	if !res.Acknowledged {
		return docResult(bson.D{{Key: "acknowledged", Value: false}}, nil), nil
	}
	return docResult(bson.D{{Key: "insertedId", Value: res.InsertedID}}, nil), nil
}

func insertMany(ctx context.Context, coll *mongo.Collection, a *args) (opResult, error) {
	o := options.InsertMany()
	docs := a.array("documents")
	if v, ok := a.take("ordered"); ok {
		b, _ := v.(bool)
		o.SetOrdered(b)
	}
	if a.has("bypassDocumentValidation") {
		b := a.boolean("bypassDocumentValidation")
		o.SetBypassDocumentValidation(b)
		if extra, ok := bypassFalse(&b); ok {
			if err := xoptions.SetInternalInsertManyOptions(o, "addCommandFields", extra); err != nil {
				return opResult{}, err
			}
		}
	}
	if v, ok := a.take("comment"); ok {
		o.SetComment(v)
	}
	if v, ok := a.take("rawData"); ok {
		if err := xoptions.SetInternalInsertManyOptions(o, "rawData", v); err != nil {
			return opResult{}, err
		}
	}
	if err := a.finish(); err != nil {
		return opResult{}, err
	}
	res, err := coll.InsertMany(ctx, toAnySlice(docs), o)
	if err != nil {
		return opResult{err: err}, nil
	}
	if !res.Acknowledged {
		return docResult(bson.D{{Key: "acknowledged", Value: false}}, nil), nil
	}
	ids := bson.D{}
	for i, id := range res.InsertedIDs {
		ids = append(ids, bson.E{Key: fmt.Sprint(i), Value: id})
	}
	return docResult(bson.D{{Key: "insertedIds", Value: ids}}, nil), nil
}

// writeOptions collects the options shared by update, replace and delete.
type writeOptions struct {
	filter       bson.D
	update       any // document or pipeline; replacement for replaceOne
	arrayFilters bson.A
	bypass       *bool
	collation    *options.Collation
	collationRaw bson.D
	comment      any
	hint         any
	let          bson.D
	sort         bson.D
	upsert       *bool
	rawData      any
}

func readWriteOptions(a *args, name string) writeOptions {
	var w writeOptions
	w.filter = a.docOrEmpty("filter")
	switch name {
	case "replaceOne", "findOneAndReplace":
		w.update, _ = a.take("replacement")
	case "updateOne", "updateMany", "findOneAndUpdate":
		w.update, _ = a.take("update")
	}
	if a.has("arrayFilters") {
		w.arrayFilters = a.array("arrayFilters")
	}
	if a.has("bypassDocumentValidation") {
		b := a.boolean("bypassDocumentValidation")
		w.bypass = &b
	}
	if v, ok := lookup(a.d, "collation"); ok {
		w.collationRaw, _ = v.(bson.D)
	}
	w.collation, _ = a.collation("collation")
	w.comment, _ = a.take("comment")
	w.hint, _ = a.take("hint")
	w.let, _ = a.doc("let")
	w.sort, _ = a.doc("sort")
	if a.has("upsert") {
		b := a.boolean("upsert")
		w.upsert = &b
	}
	w.rawData, _ = a.take("rawData")
	return w
}

func (tr *testRun) updateOp(ctx context.Context, coll *mongo.Collection, name string, a *args) (opResult, error) {
	w := readWriteOptions(a, name)
	if err := a.finish(); err != nil {
		return opResult{}, err
	}
	if tr.unacknowledgedHint(coll, w.hint != nil, hintUpdateVersion) {
		return unacknowledgedWrite(ctx, coll, name, w), nil
	}
	extra, hasExtra := bypassFalse(w.bypass)
	var res *mongo.UpdateResult
	var err error
	switch name {
	case "updateOne":
		o := options.UpdateOne()
		if w.arrayFilters != nil {
			o.SetArrayFilters(toAnySlice(w.arrayFilters))
		}
		if w.bypass != nil {
			o.SetBypassDocumentValidation(*w.bypass)
		}
		if w.collation != nil {
			o.SetCollation(w.collation)
		}
		if w.comment != nil {
			o.SetComment(w.comment)
		}
		if w.hint != nil {
			o.SetHint(w.hint)
		}
		if w.let != nil {
			o.SetLet(w.let)
		}
		if w.sort != nil {
			o.SetSort(w.sort)
		}
		if w.upsert != nil {
			o.SetUpsert(*w.upsert)
		}
		if w.rawData != nil {
			if err := xoptions.SetInternalUpdateOneOptions(o, "rawData", w.rawData); err != nil {
				return opResult{}, err
			}
		}
		if hasExtra {
			if err := xoptions.SetInternalUpdateOneOptions(o, "addCommandFields", extra); err != nil {
				return opResult{}, err
			}
		}
		res, err = coll.UpdateOne(ctx, w.filter, w.update, o)
	case "updateMany":
		o := options.UpdateMany()
		if w.arrayFilters != nil {
			o.SetArrayFilters(toAnySlice(w.arrayFilters))
		}
		if w.bypass != nil {
			o.SetBypassDocumentValidation(*w.bypass)
		}
		if w.collation != nil {
			o.SetCollation(w.collation)
		}
		if w.comment != nil {
			o.SetComment(w.comment)
		}
		if w.hint != nil {
			o.SetHint(w.hint)
		}
		if w.let != nil {
			o.SetLet(w.let)
		}
		if w.sort != nil {
			return opResult{}, fmt.Errorf("updateMany: sort is not an updateMany option")
		}
		if w.upsert != nil {
			o.SetUpsert(*w.upsert)
		}
		if w.rawData != nil {
			if err := xoptions.SetInternalUpdateManyOptions(o, "rawData", w.rawData); err != nil {
				return opResult{}, err
			}
		}
		if hasExtra {
			if err := xoptions.SetInternalUpdateManyOptions(o, "addCommandFields", extra); err != nil {
				return opResult{}, err
			}
		}
		res, err = coll.UpdateMany(ctx, w.filter, w.update, o)
	case "replaceOne":
		o := options.Replace()
		if w.bypass != nil {
			o.SetBypassDocumentValidation(*w.bypass)
		}
		if w.collation != nil {
			o.SetCollation(w.collation)
		}
		if w.comment != nil {
			o.SetComment(w.comment)
		}
		if w.hint != nil {
			o.SetHint(w.hint)
		}
		if w.let != nil {
			o.SetLet(w.let)
		}
		if w.sort != nil {
			o.SetSort(w.sort)
		}
		if w.upsert != nil {
			o.SetUpsert(*w.upsert)
		}
		if w.rawData != nil {
			if err := xoptions.SetInternalReplaceOptions(o, "rawData", w.rawData); err != nil {
				return opResult{}, err
			}
		}
		if hasExtra {
			if err := xoptions.SetInternalReplaceOptions(o, "addCommandFields", extra); err != nil {
				return opResult{}, err
			}
		}
		res, err = coll.ReplaceOne(ctx, w.filter, w.update, o)
	}
	if err != nil {
		return opResult{err: err}, nil
	}
	if !res.Acknowledged {
		return docResult(bson.D{{Key: "acknowledged", Value: false}}, nil), nil
	}
	d := bson.D{
		{Key: "matchedCount", Value: res.MatchedCount},
		{Key: "modifiedCount", Value: res.ModifiedCount},
		{Key: "upsertedCount", Value: res.UpsertedCount},
	}
	if res.UpsertedID != nil {
		d = append(d, bson.E{Key: "upsertedId", Value: res.UpsertedID})
	}
	return docResult(d, nil), nil
}

func (tr *testRun) deleteOp(ctx context.Context, coll *mongo.Collection, name string, a *args) (opResult, error) {
	w := readWriteOptions(a, name)
	if err := a.finish(); err != nil {
		return opResult{}, err
	}
	if w.sort != nil || w.upsert != nil || w.bypass != nil || w.arrayFilters != nil {
		return opResult{}, fmt.Errorf("%s: unsupported option (sort/upsert/bypassDocumentValidation/arrayFilters)", name)
	}
	if tr.unacknowledgedHint(coll, w.hint != nil, hintDeleteVersion) {
		return unacknowledgedWrite(ctx, coll, name, w), nil
	}
	var res *mongo.DeleteResult
	var err error
	if name == "deleteOne" {
		o := options.DeleteOne()
		if w.collation != nil {
			o.SetCollation(w.collation)
		}
		if w.comment != nil {
			o.SetComment(w.comment)
		}
		if w.hint != nil {
			o.SetHint(w.hint)
		}
		if w.let != nil {
			o.SetLet(w.let)
		}
		if w.rawData != nil {
			if err := xoptions.SetInternalDeleteOneOptions(o, "rawData", w.rawData); err != nil {
				return opResult{}, err
			}
		}
		res, err = coll.DeleteOne(ctx, w.filter, o)
	} else {
		o := options.DeleteMany()
		if w.collation != nil {
			o.SetCollation(w.collation)
		}
		if w.comment != nil {
			o.SetComment(w.comment)
		}
		if w.hint != nil {
			o.SetHint(w.hint)
		}
		if w.let != nil {
			o.SetLet(w.let)
		}
		if w.rawData != nil {
			if err := xoptions.SetInternalDeleteManyOptions(o, "rawData", w.rawData); err != nil {
				return opResult{}, err
			}
		}
		res, err = coll.DeleteMany(ctx, w.filter, o)
	}
	if err != nil {
		return opResult{err: err}, nil
	}
	if !res.Acknowledged {
		return docResult(bson.D{{Key: "acknowledged", Value: false}}, nil), nil
	}
	return docResult(bson.D{{Key: "deletedCount", Value: res.DeletedCount}}, nil), nil
}

func (tr *testRun) findAndModify(ctx context.Context, coll *mongo.Collection, name string, a *args) (opResult, error) {
	projection, _ := a.doc("projection")
	returnDoc := options.Before
	if a.has("returnDocument") {
		switch s := a.str("returnDocument"); strings.ToLower(s) {
		case "before":
		case "after":
			returnDoc = options.After
		default:
			return opResult{}, fmt.Errorf("%s: invalid returnDocument %q", name, s)
		}
	}
	hasReturn := a.has("returnDocument")
	w := readWriteOptions(a, name)
	if err := a.finish(); err != nil {
		return opResult{}, err
	}
	if tr.unacknowledgedHint(coll, w.hint != nil, hintDeleteVersion) {
		return unacknowledgedFindAndModify(ctx, coll, name, w, projection, returnDoc == options.After), nil
	}
	extra, hasExtra := bypassFalse(w.bypass)
	var sr *mongo.SingleResult
	switch name {
	case "findOneAndUpdate":
		o := options.FindOneAndUpdate()
		if w.arrayFilters != nil {
			o.SetArrayFilters(toAnySlice(w.arrayFilters))
		}
		if w.bypass != nil {
			o.SetBypassDocumentValidation(*w.bypass)
		}
		if w.collation != nil {
			o.SetCollation(w.collation)
		}
		if w.comment != nil {
			o.SetComment(w.comment)
		}
		if w.hint != nil {
			o.SetHint(w.hint)
		}
		if w.let != nil {
			o.SetLet(w.let)
		}
		if w.sort != nil {
			o.SetSort(w.sort)
		}
		if w.upsert != nil {
			o.SetUpsert(*w.upsert)
		}
		if projection != nil {
			o.SetProjection(projection)
		}
		if hasReturn {
			o.SetReturnDocument(returnDoc)
		}
		if w.rawData != nil {
			if err := xoptions.SetInternalFindOneAndUpdateOptions(o, "rawData", w.rawData); err != nil {
				return opResult{}, err
			}
		}
		if hasExtra {
			if err := xoptions.SetInternalFindOneAndUpdateOptions(o, "addCommandFields", extra); err != nil {
				return opResult{}, err
			}
		}
		sr = coll.FindOneAndUpdate(ctx, w.filter, w.update, o)
	case "findOneAndReplace":
		o := options.FindOneAndReplace()
		if w.arrayFilters != nil {
			return opResult{}, fmt.Errorf("findOneAndReplace: arrayFilters is not an option")
		}
		if w.bypass != nil {
			o.SetBypassDocumentValidation(*w.bypass)
		}
		if w.collation != nil {
			o.SetCollation(w.collation)
		}
		if w.comment != nil {
			o.SetComment(w.comment)
		}
		if w.hint != nil {
			o.SetHint(w.hint)
		}
		if w.let != nil {
			o.SetLet(w.let)
		}
		if w.sort != nil {
			o.SetSort(w.sort)
		}
		if w.upsert != nil {
			o.SetUpsert(*w.upsert)
		}
		if projection != nil {
			o.SetProjection(projection)
		}
		if hasReturn {
			o.SetReturnDocument(returnDoc)
		}
		if w.rawData != nil {
			if err := xoptions.SetInternalFindOneAndReplaceOptions(o, "rawData", w.rawData); err != nil {
				return opResult{}, err
			}
		}
		if hasExtra {
			if err := xoptions.SetInternalFindOneAndReplaceOptions(o, "addCommandFields", extra); err != nil {
				return opResult{}, err
			}
		}
		sr = coll.FindOneAndReplace(ctx, w.filter, w.update, o)
	case "findOneAndDelete":
		if w.arrayFilters != nil || w.upsert != nil || w.bypass != nil || hasReturn {
			return opResult{}, fmt.Errorf("findOneAndDelete: unsupported option (arrayFilters/upsert/bypassDocumentValidation/returnDocument)")
		}
		o := options.FindOneAndDelete()
		if w.collation != nil {
			o.SetCollation(w.collation)
		}
		if w.comment != nil {
			o.SetComment(w.comment)
		}
		if w.hint != nil {
			o.SetHint(w.hint)
		}
		if w.let != nil {
			o.SetLet(w.let)
		}
		if w.sort != nil {
			o.SetSort(w.sort)
		}
		if projection != nil {
			o.SetProjection(projection)
		}
		if w.rawData != nil {
			if err := xoptions.SetInternalFindOneAndDeleteOptions(o, "rawData", w.rawData); err != nil {
				return opResult{}, err
			}
		}
		sr = coll.FindOneAndDelete(ctx, w.filter, o)
	}
	return singleResult(sr), nil
}

func createIndex(ctx context.Context, coll *mongo.Collection, a *args) (opResult, error) {
	keys, _ := a.doc("keys")
	io := options.Index()
	if v, ok := a.take("name"); ok {
		s, _ := v.(string)
		io.SetName(s)
	}
	if v, ok := a.take("unique"); ok {
		b, _ := v.(bool)
		io.SetUnique(b)
	}
	if v, ok := a.take("sparse"); ok {
		b, _ := v.(bool)
		io.SetSparse(b)
	}
	if n, ok := a.int64("expireAfterSeconds"); ok {
		io.SetExpireAfterSeconds(int32(n))
	}
	if err := a.finish(); err != nil {
		return opResult{}, err
	}
	name, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: keys, Options: io})
	return opResult{value: name, err: err}, nil
}
