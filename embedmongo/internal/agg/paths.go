package agg

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// getField follows a dotted path through embedded documents only, as stages like $unwind do:
// arrays along the way are not traversed and numeric components are plain field names.
func getField(doc bson.D, path []string) any {
	var v any = doc
	for _, p := range path {
		d, ok := v.(bson.D)
		if !ok {
			return bsonkit.Missing
		}
		if v, ok = bsonkit.Get(d, p); !ok {
			return bsonkit.Missing
		}
	}
	return v
}

// setField returns a copy of doc with path set to v, creating embedded documents along the
// way and replacing non-document values in the way (MutableDocument::setNestedField).
// Setting Missing removes the field. doc itself is not modified.
func setField(doc bson.D, path []string, v any) bson.D {
	out := make(bson.D, len(doc), len(doc)+1)
	copy(out, doc)
	if len(path) == 1 {
		if bsonkit.IsMissing(v) {
			return bsonkit.Remove(out, path[0])
		}
		return bsonkit.Set(out, path[0], v)
	}
	cur, _ := bsonkit.Get(doc, path[0])
	sub, ok := cur.(bson.D)
	if !ok {
		if bsonkit.IsMissing(v) {
			return out
		}
		sub = bson.D{}
	}
	return bsonkit.Set(out, path[0], setField(sub, path[1:], v))
}

// parseFieldPath validates a field path used as a stage argument (without the leading '$'),
// with mongod's FieldPath errors.
func parseFieldPath(p string) ([]string, error) {
	if p == "" {
		return nil, mongoerr.New(40352, "FieldPath cannot be constructed with empty string")
	}
	if strings.HasSuffix(p, ".") {
		return nil, mongoerr.New(40353, "FieldPath must not end with a '.'.")
	}
	parts := strings.Split(p, ".")
	for _, s := range parts {
		if s == "" {
			return nil, mongoerr.New(15998, "FieldPath field names may not be empty strings.")
		}
		if s[0] == '$' {
			return nil, mongoerr.New(16410, "FieldPath field names may not start with '$'. Consider using $getField or $setField.")
		}
	}
	return parts, nil
}

// fmtValue renders a value for error messages, close to mongod's shell-like notation.
func fmtValue(v any) string {
	if bsonkit.IsMissing(v) {
		return "MISSING"
	}
	b, err := bson.MarshalExtJSON(bson.D{{Key: "v", Value: v}}, false, false)
	if err != nil {
		return "?"
	}
	s := string(b)
	s = strings.TrimPrefix(s, `{"v":`)
	return strings.TrimSuffix(s, "}")
}

// isNumber reports whether v is a BSON number.
func isNumber(v any) bool { return bsonkit.IsNumber(v) }
