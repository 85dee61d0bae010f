// Package bulk sends many update statements in one "update" command and
// reports what became of each one that the server answers for individually.
//
// The driver's BulkWrite folds per-statement outcomes into totals; a batch
// of fenced writes needs to know which statements inserted (upserted) and
// which failed (writeErrors, by index), and to treat a shortfall in the
// matched total as "some fenced statement was refused". Sending the command
// itself gives exactly the server's reply: one round trip and, on mongod
// and embedmongo alike, one journal wait for the whole batch.
package bulk

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// Update is one statement of an update command: at most one document
// (multi is never set), inserted if absent when Upsert is set. U is an
// update document or a pipeline (bson.A / mongo.Pipeline).
type Update struct {
	Filter bson.D
	U      any
	Upsert bool
}

// Result is the server's answer to the whole command.
type Result struct {
	// Matched counts statements that matched an existing document; upserts
	// that inserted are not counted here but in Upserted.
	Matched int
	// Upserted holds the indexes of statements that inserted a document.
	Upserted map[int]bool
	// Errors holds, by statement index, the statements the server refused.
	Errors map[int]mongo.WriteError
}

// OK reports whether every statement matched or inserted.
func (r Result) OK(statements int) bool {
	return len(r.Errors) == 0 && r.Matched+len(r.Upserted) == statements
}

// MaxStatements bounds one command, well inside every server's limits
// (mongod's maxWriteBatchSize is 100,000 and a message 48 MB).
const MaxStatements = 1000

// UpdateMany runs the statements as one unordered update command: each is
// applied or refused on its own. An error means the command as a whole
// failed, or its outcome is unknown (a network error): statements may or
// may not have been applied, as with any write.
func UpdateMany(ctx context.Context, coll *mongo.Collection, stmts []Update) (Result, error) {
	res := Result{Upserted: map[int]bool{}, Errors: map[int]mongo.WriteError{}}
	if len(stmts) == 0 {
		return res, nil
	}
	if len(stmts) > MaxStatements {
		return res, fmt.Errorf("bulk update of %d statements: at most %d", len(stmts), MaxStatements)
	}
	updates := make(bson.A, len(stmts))
	for i, s := range stmts {
		updates[i] = bson.D{{Key: "q", Value: s.Filter}, {Key: "u", Value: s.U}, {Key: "upsert", Value: s.Upsert}}
	}
	cmd := bson.D{{Key: "update", Value: coll.Name()}, {Key: "updates", Value: updates}, {Key: "ordered", Value: false}}
	var reply struct {
		N        int `bson:"n"`
		Upserted []struct {
			Index int `bson:"index"`
		} `bson:"upserted"`
		WriteErrors []struct {
			Index   int    `bson:"index"`
			Code    int    `bson:"code"`
			Message string `bson:"errmsg"`
		} `bson:"writeErrors"`
		WriteConcernError *struct {
			Code    int    `bson:"code"`
			Message string `bson:"errmsg"`
		} `bson:"writeConcernError"`
	}
	raw, err := coll.Database().RunCommand(ctx, cmd).Raw()
	// The driver turns a reply with writeErrors into a WriteException; the
	// reply itself, kept in it, says which statements they were.
	if we := (mongo.WriteException{}); errors.As(err, &we) && len(we.Raw) > 0 {
		raw, err = we.Raw, nil
	}
	if err == nil {
		err = bson.Unmarshal(raw, &reply)
	}
	if err != nil {
		return res, fmt.Errorf("bulk update of %s (%d statements): %w", coll.Name(), len(stmts), err)
	}
	if wce := reply.WriteConcernError; wce != nil {
		return res, fmt.Errorf("bulk update of %s: write concern error %d: %s", coll.Name(), wce.Code, wce.Message)
	}
	for _, u := range reply.Upserted {
		if u.Index < 0 || u.Index >= len(stmts) {
			return res, errors.New("bulk update: server reported an upsert at an index out of range")
		}
		res.Upserted[u.Index] = true
	}
	for _, e := range reply.WriteErrors {
		res.Errors[e.Index] = mongo.WriteError{Index: e.Index, Code: e.Code, Message: e.Message}
	}
	res.Matched = reply.N - len(res.Upserted)
	return res, nil
}
