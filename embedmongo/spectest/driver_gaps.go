package spectest

// The Go driver v2.9.3 deviates from the CRUD specification in a few places that these tests
// assert (its own spec runner skips them: GODRIVER-2125, -3407, -3395, DRIVERS-2829). So that
// the tests measure the server and not the driver, the runner closes these gaps itself, still
// through the driver's public API: it adds the command fields a compliant driver would send, or
// sends the exact command a compliant driver would build with Database.RunCommand.

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// bypassFalse returns the field for an explicit bypassDocumentValidation: false, which the
// driver drops (GODRIVER-3407) although the CRUD spec says to pass it on.
func bypassFalse(b *bool) (bson.D, bool) {
	if b != nil && !*b {
		return bson.D{{Key: "bypassDocumentValidation", Value: false}}, true
	}
	return nil, false
}

// unacknowledgedHint reports whether a write must bypass the driver because it combines a hint
// with an unacknowledged write concern: the driver rejects that client-side (GODRIVER-2125),
// while the CRUD spec sends it to servers that support hint on that command (update: 4.2,
// delete and findAndModify: 4.4). On older servers the driver's client-side error is right.
func (tr *testRun) unacknowledgedHint(coll *mongo.Collection, hasHint bool, minVersion [3]int) bool {
	wc := tr.entities.writeConcerns[coll]
	return hasHint && wc != nil && !wc.Acknowledged() &&
		compareVersions(tr.runner.info.Version, minVersion) >= 0
}

var (
	hintUpdateVersion = [3]int{4, 2, 0}
	hintDeleteVersion = [3]int{4, 4, 0}
)

// sendUnacknowledged runs a write command with writeConcern {w: 0}; the result of an
// unacknowledged write is just that: unacknowledged.
func sendUnacknowledged(ctx context.Context, coll *mongo.Collection, cmd bson.D) opResult {
	cmd = append(cmd, bson.E{Key: "writeConcern", Value: bson.D{{Key: "w", Value: int32(0)}}})
	err := coll.Database().RunCommand(ctx, cmd).Err()
	return docResult(bson.D{{Key: "acknowledged", Value: false}}, err)
}

// updateStatement builds an update command's statement as the CRUD spec maps the options.
func updateStatement(w writeOptions, multi bool) bson.D {
	st := bson.D{{Key: "q", Value: w.filter}, {Key: "u", Value: w.update}}
	if multi {
		st = append(st, bson.E{Key: "multi", Value: true})
	}
	if w.upsert != nil {
		st = append(st, bson.E{Key: "upsert", Value: *w.upsert})
	}
	if w.arrayFilters != nil {
		st = append(st, bson.E{Key: "arrayFilters", Value: w.arrayFilters})
	}
	if w.collation != nil {
		st = append(st, bson.E{Key: "collation", Value: w.collationRaw})
	}
	if w.hint != nil {
		st = append(st, bson.E{Key: "hint", Value: w.hint})
	}
	if w.sort != nil {
		st = append(st, bson.E{Key: "sort", Value: w.sort})
	}
	return st
}

func deleteStatement(w writeOptions, multi bool) bson.D {
	limit := int32(1)
	if multi {
		limit = 0
	}
	st := bson.D{{Key: "q", Value: w.filter}, {Key: "limit", Value: limit}}
	if w.collation != nil {
		st = append(st, bson.E{Key: "collation", Value: w.collationRaw})
	}
	if w.hint != nil {
		st = append(st, bson.E{Key: "hint", Value: w.hint})
	}
	return st
}

// commonWriteFields appends the command-level options of a write command.
func commonWriteFields(cmd bson.D, w writeOptions) bson.D {
	if w.comment != nil {
		cmd = append(cmd, bson.E{Key: "comment", Value: w.comment})
	}
	if w.let != nil {
		cmd = append(cmd, bson.E{Key: "let", Value: w.let})
	}
	if w.bypass != nil {
		cmd = append(cmd, bson.E{Key: "bypassDocumentValidation", Value: *w.bypass})
	}
	return cmd
}

// unacknowledgedWrite sends updateOne/updateMany/replaceOne/deleteOne/deleteMany.
func unacknowledgedWrite(ctx context.Context, coll *mongo.Collection, name string, w writeOptions) opResult {
	var cmd bson.D
	switch name {
	case "deleteOne", "deleteMany":
		cmd = bson.D{{Key: "delete", Value: coll.Name()},
			{Key: "deletes", Value: bson.A{deleteStatement(w, name == "deleteMany")}}}
	default:
		cmd = bson.D{{Key: "update", Value: coll.Name()},
			{Key: "updates", Value: bson.A{updateStatement(w, name == "updateMany")}}}
	}
	cmd = append(cmd, bson.E{Key: "ordered", Value: true})
	return sendUnacknowledged(ctx, coll, commonWriteFields(cmd, w))
}

// unacknowledgedFindAndModify sends findOneAndUpdate/Replace/Delete.
func unacknowledgedFindAndModify(ctx context.Context, coll *mongo.Collection, name string, w writeOptions,
	projection bson.D, returnAfter bool) opResult {
	cmd := bson.D{{Key: "findAndModify", Value: coll.Name()}, {Key: "query", Value: w.filter}}
	if name == "findOneAndDelete" {
		cmd = append(cmd, bson.E{Key: "remove", Value: true})
	} else {
		cmd = append(cmd, bson.E{Key: "update", Value: w.update})
		if returnAfter {
			cmd = append(cmd, bson.E{Key: "new", Value: true})
		}
		if w.upsert != nil {
			cmd = append(cmd, bson.E{Key: "upsert", Value: *w.upsert})
		}
	}
	if projection != nil {
		cmd = append(cmd, bson.E{Key: "fields", Value: projection})
	}
	if w.sort != nil {
		cmd = append(cmd, bson.E{Key: "sort", Value: w.sort})
	}
	if w.arrayFilters != nil {
		cmd = append(cmd, bson.E{Key: "arrayFilters", Value: w.arrayFilters})
	}
	if w.collation != nil {
		cmd = append(cmd, bson.E{Key: "collation", Value: w.collationRaw})
	}
	cmd = append(cmd, bson.E{Key: "hint", Value: w.hint})
	res := sendUnacknowledged(ctx, coll, commonWriteFields(cmd, w))
	// An unacknowledged findAndModify returns no document, like the driver's empty SingleResult.
	res.value = nil
	return res
}

// unacknowledgedBulkWrite sends a bulk write as a compliant driver batches it: consecutive
// requests of the same kind share one command.
func unacknowledgedBulkWrite(ctx context.Context, coll *mongo.Collection, reqs []bulkRequest, ordered *bool, bulk writeOptions) opResult {
	order := true
	if ordered != nil {
		order = *ordered
	}
	var lastErr error
	for i := 0; i < len(reqs); {
		kind := reqs[i].command()
		var stmts bson.A
		j := i
		for ; j < len(reqs) && reqs[j].command() == kind; j++ {
			stmts = append(stmts, reqs[j].statement())
		}
		field := map[string]string{"insert": "documents", "update": "updates", "delete": "deletes"}[kind]
		cmd := bson.D{{Key: kind, Value: coll.Name()}, {Key: field, Value: stmts}, {Key: "ordered", Value: order}}
		if res := sendUnacknowledged(ctx, coll, commonWriteFields(cmd, bulk)); res.err != nil {
			lastErr = res.err
		}
		i = j
	}
	return docResult(bson.D{{Key: "acknowledged", Value: false}}, lastErr)
}

// bulkRequest is one parsed bulkWrite request.
type bulkRequest struct {
	kind string // insertOne, updateOne, ...
	doc  bson.D // insertOne's document
	w    writeOptions
}

func (b bulkRequest) command() string {
	switch b.kind {
	case "insertOne":
		return "insert"
	case "deleteOne", "deleteMany":
		return "delete"
	}
	return "update"
}

func (b bulkRequest) statement() bson.D {
	switch b.kind {
	case "insertOne":
		if _, ok := lookup(b.doc, "_id"); !ok {
			// Drivers generate the _id of inserted documents that lack one.
			return append(bson.D{{Key: "_id", Value: bson.NewObjectID()}}, b.doc...)
		}
		return b.doc
	case "deleteOne", "deleteMany":
		return deleteStatement(b.w, b.kind == "deleteMany")
	}
	return updateStatement(b.w, b.kind == "updateMany")
}

func (b bulkRequest) hasHint() bool { return b.w.hint != nil }
