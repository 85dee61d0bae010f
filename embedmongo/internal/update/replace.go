package update

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// applyReplacement replaces every field but _id, which keeps its value and stays first; a
// replacement carrying a different _id is refused.
func (u *Update) applyReplacement(doc bson.D) (bson.D, bool, error) {
	for _, e := range u.replacement {
		if strings.HasPrefix(e.Key, "$") {
			return nil, false, mongoerr.New(mongoerr.DollarPrefixedFieldName,
				"The dollar ($) prefixed field '%s' in '%s' is not allowed in the context of an update's replacement document. Consider using an aggregation pipeline with $replaceWith.",
				e.Key, e.Key)
		}
	}
	id, hasID := bsonkit.Get(doc, "_id")
	newID, newHasID := bsonkit.Get(u.replacement, "_id")
	if hasID && newHasID && !identical(id, newID) {
		return nil, false, mongoerr.New(mongoerr.ImmutableField,
			"After applying the update, the (immutable) field '_id' was found to have been altered to %s",
			formatElem("_id", newID))
	}
	out := make(bson.D, 0, len(u.replacement)+1)
	switch {
	case hasID:
		out = append(out, bson.E{Key: "_id", Value: id})
	case newHasID:
		if err := checkIDValue(newID); err != nil {
			return nil, false, err
		}
		out = append(out, bson.E{Key: "_id", Value: newID})
	}
	for _, e := range u.replacement {
		if e.Key != "_id" {
			out = append(out, e)
		}
	}
	if identical(doc, out) {
		return doc, false, nil
	}
	return out, true, nil
}
