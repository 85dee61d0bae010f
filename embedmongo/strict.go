package embedmongo

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// mongod parses write statements strictly (IDL): a field it does not know fails the whole
// command before any statement runs, e.g. an update's `sort`, which only 8.0 accepts.

var updateStmtFields = map[string]bool{
	"q": true, "u": true, "c": true, "arrayFilters": true, "hint": true, "multi": true,
	"upsert": true, "upsertSupplied": true, "collation": true, "sampleId": true,
	"$_allowShardKeyUpdatesWithoutFullShardKeyInQuery": true,
}

var deleteStmtFields = map[string]bool{
	"q": true, "limit": true, "hint": true, "collation": true, "sampleId": true,
}

// checkStmtFields rejects unknown fields in the statements of cmd's array field (e.g.
// update.updates) with mongod's error; non-document statements are left to the command.
func checkStmtFields(cmd, field string, stmts bson.A, known map[string]bool) error {
	for _, v := range stmts {
		d, ok := v.(bson.D)
		if !ok {
			continue
		}
		for _, e := range d {
			if !known[e.Key] {
				return mongoerr.New(40415, "BSON field '%s.%s.%s' is an unknown field.", cmd, field, e.Key)
			}
		}
	}
	return nil
}
