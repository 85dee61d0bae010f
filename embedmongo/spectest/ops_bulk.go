package spectest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/xoptions"
)

// writeModel is one request of bulkWrite/clientBulkWrite: {<kind>: {...}}.
func splitModel(v any, i int) (string, *args, error) {
	d, ok := v.(bson.D)
	if !ok || len(d) != 1 {
		return "", nil, fmt.Errorf("request %d must be a single-key document, got %s", i, show(v))
	}
	body, ok := d[0].Value.(bson.D)
	if !ok {
		return "", nil, fmt.Errorf("request %d: %s must be a document", i, d[0].Key)
	}
	return d[0].Key, newArgs(fmt.Sprintf("request %d (%s)", i, d[0].Key), body), nil
}

func parseBulkRequest(kind string, a *args) (bulkRequest, error) {
	req := bulkRequest{kind: kind}
	if kind == "insertOne" {
		req.doc, _ = a.doc("document")
		return req, a.finish()
	}
	req.w = readWriteOptions(a, kind)
	if err := a.finish(); err != nil {
		return req, err
	}
	w := req.w
	if w.comment != nil || w.let != nil || w.rawData != nil || w.bypass != nil {
		return req, fmt.Errorf("%s: comment/let/rawData/bypassDocumentValidation are bulk-level options", kind)
	}
	switch kind {
	case "updateOne", "replaceOne":
		if kind == "replaceOne" && w.arrayFilters != nil {
			return req, errors.New("replaceOne: arrayFilters is not an option")
		}
	case "updateMany":
		if w.sort != nil {
			return req, errors.New("updateMany: sort is not an option")
		}
	case "deleteOne", "deleteMany":
		if w.arrayFilters != nil || w.upsert != nil || w.sort != nil {
			return req, fmt.Errorf("%s: arrayFilters/upsert/sort are not options", kind)
		}
	default:
		return req, fmt.Errorf("unsupported write model %q", kind)
	}
	return req, nil
}

func collectionModel(req bulkRequest) mongo.WriteModel {
	w := req.w
	switch req.kind {
	case "insertOne":
		return mongo.NewInsertOneModel().SetDocument(req.doc)
	case "updateOne":
		m := mongo.NewUpdateOneModel().SetFilter(w.filter).SetUpdate(w.update)
		if w.arrayFilters != nil {
			m.SetArrayFilters(toAnySlice(w.arrayFilters))
		}
		if w.collation != nil {
			m.SetCollation(w.collation)
		}
		if w.hint != nil {
			m.SetHint(w.hint)
		}
		if w.upsert != nil {
			m.SetUpsert(*w.upsert)
		}
		if w.sort != nil {
			m.SetSort(w.sort)
		}
		return m
	case "updateMany":
		m := mongo.NewUpdateManyModel().SetFilter(w.filter).SetUpdate(w.update)
		if w.arrayFilters != nil {
			m.SetArrayFilters(toAnySlice(w.arrayFilters))
		}
		if w.collation != nil {
			m.SetCollation(w.collation)
		}
		if w.hint != nil {
			m.SetHint(w.hint)
		}
		if w.upsert != nil {
			m.SetUpsert(*w.upsert)
		}
		return m
	case "replaceOne":
		m := mongo.NewReplaceOneModel().SetFilter(w.filter).SetReplacement(w.update)
		if w.collation != nil {
			m.SetCollation(w.collation)
		}
		if w.hint != nil {
			m.SetHint(w.hint)
		}
		if w.upsert != nil {
			m.SetUpsert(*w.upsert)
		}
		if w.sort != nil {
			m.SetSort(w.sort)
		}
		return m
	case "deleteOne":
		m := mongo.NewDeleteOneModel().SetFilter(w.filter)
		if w.collation != nil {
			m.SetCollation(w.collation)
		}
		if w.hint != nil {
			m.SetHint(w.hint)
		}
		return m
	}
	m := mongo.NewDeleteManyModel().SetFilter(w.filter)
	if w.collation != nil {
		m.SetCollation(w.collation)
	}
	if w.hint != nil {
		m.SetHint(w.hint)
	}
	return m
}

func (tr *testRun) bulkWrite(ctx context.Context, coll *mongo.Collection, a *args) (opResult, error) {
	var reqs []bulkRequest
	hint, minVersion := false, [3]int{}
	for i, v := range a.array("requests") {
		kind, ma, err := splitModel(v, i)
		if err != nil {
			return opResult{}, err
		}
		req, err := parseBulkRequest(kind, ma)
		if err != nil {
			return opResult{}, err
		}
		if req.hasHint() {
			hint = true
			v := hintUpdateVersion
			if req.command() == "delete" {
				v = hintDeleteVersion
			}
			if compareVersions(v, minVersion) > 0 {
				minVersion = v
			}
		}
		reqs = append(reqs, req)
	}
	// Bulk-level options, kept in a writeOptions for the unacknowledged path.
	var bulk writeOptions
	var ordered *bool
	o := options.BulkWrite()
	if a.has("ordered") {
		b := a.boolean("ordered")
		ordered = &b
		o.SetOrdered(b)
	}
	if a.has("bypassDocumentValidation") {
		b := a.boolean("bypassDocumentValidation")
		bulk.bypass = &b
		o.SetBypassDocumentValidation(b)
		if extra, ok := bypassFalse(&b); ok {
			if err := xoptions.SetInternalBulkWriteOptions(o, "addCommandFields", extra); err != nil {
				return opResult{}, err
			}
		}
	}
	if v, ok := a.take("comment"); ok {
		bulk.comment = v
		o.SetComment(v)
	}
	if v, ok := a.doc("let"); ok {
		bulk.let = v
		o.SetLet(v)
	}
	if v, ok := a.take("rawData"); ok {
		if err := xoptions.SetInternalBulkWriteOptions(o, "rawData", v); err != nil {
			return opResult{}, err
		}
	}
	if err := a.finish(); err != nil {
		return opResult{}, err
	}
	if tr.unacknowledgedHint(coll, hint, minVersion) {
		return unacknowledgedBulkWrite(ctx, coll, reqs, ordered, bulk), nil
	}
	models := make([]mongo.WriteModel, len(reqs))
	for i, req := range reqs {
		models[i] = collectionModel(req)
	}
	res, err := coll.BulkWrite(ctx, models, o)
	var doc any = absent
	if res != nil {
		doc = bulkWriteResultDoc(res)
	}
	return opResult{value: doc, rootDoc: true, err: err}, nil
}

func bulkWriteResultDoc(res *mongo.BulkWriteResult) bson.D {
	if !res.Acknowledged {
		return bson.D{{Key: "acknowledged", Value: false}}
	}
	upserted := bson.D{}
	for i := int64(0); len(upserted) < len(res.UpsertedIDs); i++ {
		if id, ok := res.UpsertedIDs[i]; ok {
			upserted = append(upserted, bson.E{Key: fmt.Sprint(i), Value: id})
		}
	}
	return bson.D{
		{Key: "deletedCount", Value: res.DeletedCount},
		{Key: "insertedCount", Value: res.InsertedCount},
		{Key: "matchedCount", Value: res.MatchedCount},
		{Key: "modifiedCount", Value: res.ModifiedCount},
		{Key: "upsertedCount", Value: res.UpsertedCount},
		{Key: "upsertedIds", Value: upserted},
	}
}

func clientBulkWrite(ctx context.Context, client *mongo.Client, a *args) (opResult, error) {
	var writes []mongo.ClientBulkWrite
	for i, v := range a.array("models") {
		kind, ma, err := splitModel(v, i)
		if err != nil {
			return opResult{}, err
		}
		ns := ma.str("namespace")
		db, coll, ok := strings.Cut(ns, ".")
		if !ok {
			return opResult{}, fmt.Errorf("request %d: namespace %q is not db.collection", i, ns)
		}
		m, err := clientModel(kind, ma)
		if err != nil {
			return opResult{}, err
		}
		writes = append(writes, mongo.ClientBulkWrite{Database: db, Collection: coll, Model: m})
	}
	o := options.ClientBulkWrite()
	if v, ok := a.take("ordered"); ok {
		b, _ := v.(bool)
		o.SetOrdered(b)
	}
	if v, ok := a.take("bypassDocumentValidation"); ok {
		b, _ := v.(bool)
		o.SetBypassDocumentValidation(b)
	}
	if v, ok := a.take("comment"); ok {
		o.SetComment(v)
	}
	if v, ok := a.doc("let"); ok {
		o.SetLet(v)
	}
	verbose := false
	if v, ok := a.take("verboseResults"); ok {
		verbose, _ = v.(bool)
		o.SetVerboseResults(verbose)
	}
	if v, ok := a.doc("writeConcern"); ok {
		wc, err := writeConcern(v)
		if err != nil {
			return opResult{}, err
		}
		o.SetWriteConcern(wc)
	}
	if v, ok := a.take("rawData"); ok {
		if err := xoptions.SetInternalClientBulkWriteOptions(o, "rawData", v); err != nil {
			return opResult{}, err
		}
	}
	if err := a.finish(); err != nil {
		return opResult{}, err
	}
	res, err := client.BulkWrite(ctx, writes, o)
	var doc any = absent
	if res != nil {
		doc = clientBulkWriteResultDoc(res)
	}
	var cbe mongo.ClientBulkWriteException
	if errors.As(err, &cbe) && cbe.PartialResult != nil {
		doc = clientBulkWriteResultDoc(cbe.PartialResult)
	}
	return opResult{value: doc, rootDoc: true, err: err}, nil
}

func clientModel(kind string, a *args) (mongo.ClientWriteModel, error) {
	if kind == "insertOne" {
		doc, _ := a.doc("document")
		return mongo.NewClientInsertOneModel().SetDocument(doc), a.finish()
	}
	w := readWriteOptions(a, kind)
	if err := a.finish(); err != nil {
		return nil, err
	}
	if w.comment != nil || w.let != nil || w.rawData != nil || w.bypass != nil {
		return nil, fmt.Errorf("%s: comment/let/rawData/bypassDocumentValidation are bulk-level options", kind)
	}
	switch kind {
	case "updateOne":
		m := mongo.NewClientUpdateOneModel().SetFilter(w.filter).SetUpdate(w.update)
		if w.arrayFilters != nil {
			m.SetArrayFilters(toAnySlice(w.arrayFilters))
		}
		if w.collation != nil {
			m.SetCollation(w.collation)
		}
		if w.hint != nil {
			m.SetHint(w.hint)
		}
		if w.upsert != nil {
			m.SetUpsert(*w.upsert)
		}
		if w.sort != nil {
			m.SetSort(w.sort)
		}
		return m, nil
	case "updateMany":
		m := mongo.NewClientUpdateManyModel().SetFilter(w.filter).SetUpdate(w.update)
		if w.arrayFilters != nil {
			m.SetArrayFilters(toAnySlice(w.arrayFilters))
		}
		if w.collation != nil {
			m.SetCollation(w.collation)
		}
		if w.hint != nil {
			m.SetHint(w.hint)
		}
		if w.upsert != nil {
			m.SetUpsert(*w.upsert)
		}
		if w.sort != nil {
			return nil, errors.New("updateMany: sort is not an option")
		}
		return m, nil
	case "replaceOne":
		m := mongo.NewClientReplaceOneModel().SetFilter(w.filter).SetReplacement(w.update)
		if w.arrayFilters != nil {
			return nil, errors.New("replaceOne: arrayFilters is not an option")
		}
		if w.collation != nil {
			m.SetCollation(w.collation)
		}
		if w.hint != nil {
			m.SetHint(w.hint)
		}
		if w.upsert != nil {
			m.SetUpsert(*w.upsert)
		}
		if w.sort != nil {
			m.SetSort(w.sort)
		}
		return m, nil
	case "deleteOne", "deleteMany":
		if w.arrayFilters != nil || w.upsert != nil || w.sort != nil {
			return nil, fmt.Errorf("%s: arrayFilters/upsert/sort are not options", kind)
		}
		if kind == "deleteOne" {
			m := mongo.NewClientDeleteOneModel().SetFilter(w.filter)
			if w.collation != nil {
				m.SetCollation(w.collation)
			}
			if w.hint != nil {
				m.SetHint(w.hint)
			}
			return m, nil
		}
		m := mongo.NewClientDeleteManyModel().SetFilter(w.filter)
		if w.collation != nil {
			m.SetCollation(w.collation)
		}
		if w.hint != nil {
			m.SetHint(w.hint)
		}
		return m, nil
	}
	return nil, fmt.Errorf("unsupported write model %q", kind)
}

// clientBulkWriteResultDoc converts a ClientBulkWriteResult; the per-operation maps are present
// only with verbose results, as the spec's summary-only results allow.
func clientBulkWriteResultDoc(res *mongo.ClientBulkWriteResult) bson.D {
	if !res.Acknowledged {
		return bson.D{{Key: "acknowledged", Value: false}}
	}
	d := bson.D{
		{Key: "insertedCount", Value: res.InsertedCount},
		{Key: "upsertedCount", Value: res.UpsertedCount},
		{Key: "matchedCount", Value: res.MatchedCount},
		{Key: "modifiedCount", Value: res.ModifiedCount},
		{Key: "deletedCount", Value: res.DeletedCount},
	}
	if !res.HasVerboseResults {
		return d
	}
	ins, upd, del := bson.D{}, bson.D{}, bson.D{}
	for _, i := range sortedKeys(res.InsertResults) {
		ins = append(ins, bson.E{Key: fmt.Sprint(i), Value: bson.D{{Key: "insertedId", Value: res.InsertResults[i].InsertedID}}})
	}
	for _, i := range sortedKeys(res.UpdateResults) {
		r := res.UpdateResults[i]
		u := bson.D{{Key: "matchedCount", Value: r.MatchedCount}, {Key: "modifiedCount", Value: r.ModifiedCount}}
		if r.UpsertedID != nil {
			u = append(u, bson.E{Key: "upsertedId", Value: r.UpsertedID})
		}
		upd = append(upd, bson.E{Key: fmt.Sprint(i), Value: u})
	}
	for _, i := range sortedKeys(res.DeleteResults) {
		del = append(del, bson.E{Key: fmt.Sprint(i), Value: bson.D{{Key: "deletedCount", Value: res.DeleteResults[i].DeletedCount}}})
	}
	return append(d, bson.E{Key: "insertResults", Value: ins}, bson.E{Key: "updateResults", Value: upd},
		bson.E{Key: "deleteResults", Value: del})
}

func sortedKeys[V any](m map[int]V) []int {
	return slices.Sorted(maps.Keys(m))
}
