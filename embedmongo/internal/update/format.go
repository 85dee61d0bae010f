package update

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
)

// formatValue renders v as mongod's error messages do.
func formatValue(v any) string { return bsonkit.Format(v) }

// formatElem renders a field as mongod's element toString: `name: value`.
func formatElem(name string, v any) string { return name + ": " + bsonkit.Format(v) }

// idString renders the document's _id element for messages ("_id: 1"), or "no id".
func idString(doc bson.D) string {
	for _, e := range doc {
		if e.Key == "_id" {
			return formatElem("_id", e.Value)
		}
	}
	return "no id"
}
