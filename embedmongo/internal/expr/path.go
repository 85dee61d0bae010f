package expr

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// compilePath compiles "$a.b" (a path from $$CURRENT) and "$$var.a.b".
func compilePath(s string) (node, error) {
	if strings.HasPrefix(s, "$$") {
		name, rest, hasRest := strings.Cut(s[2:], ".")
		if err := validateVarRead(name); err != nil {
			return node{}, err
		}
		var parts []string
		if hasRest {
			var err error
			if parts, err = splitPath(rest); err != nil {
				return node{}, err
			}
		}
		return dynamic(func(c *ctx) (any, error) {
			v, err := c.lookup(name)
			if err != nil || parts == nil {
				return v, err
			}
			return walk(v, parts), nil
		}), nil
	}
	if s == "$" {
		return node{}, mongoerr.New(16872, "'$' by itself is not a valid FieldPath")
	}
	parts, err := splitPath(s[1:])
	if err != nil {
		return node{}, err
	}
	if len(parts) == 1 {
		key := parts[0]
		return dynamic(func(c *ctx) (any, error) {
			if d, ok := c.current.(bson.D); ok {
				if v, ok := bsonkit.Get(d, key); ok {
					return v, nil
				}
				return bsonkit.Missing, nil
			}
			return walk(c.current, parts), nil
		}), nil
	}
	return dynamic(func(c *ctx) (any, error) { return walk(c.current, parts), nil }), nil
}

func splitPath(p string) ([]string, error) {
	if strings.HasSuffix(p, ".") {
		return nil, mongoerr.New(40353, "FieldPath must not end with a '.'.")
	}
	parts := strings.Split(p, ".")
	for _, part := range parts {
		if err := validFieldName(part); err != nil {
			return nil, err
		}
	}
	return parts, nil
}

// validFieldName applies mongod's FieldPath rules to one path component or object key.
func validFieldName(f string) error {
	const hint = " Consider using $getField or $setField."
	switch {
	case f == "":
		return mongoerr.New(15998, "FieldPath field names may not be empty strings.")
	case f[0] == '$' && f != "$id" && f != "$ref" && f != "$db":
		return mongoerr.New(16410, "FieldPath field names may not start with '$'.%s", hint)
	case strings.IndexByte(f, 0) >= 0:
		return mongoerr.New(16411, "FieldPath field names may not contain '\\0'.")
	case strings.IndexByte(f, '.') >= 0:
		return mongoerr.New(16412, "FieldPath field names may not contain '.'.%s", hint)
	}
	return nil
}

// validateVarRead checks a variable reference the way mongod's parser does.
func validateVarRead(name string) error {
	if name == "" {
		return mongoerr.New(16869, "empty variable names are not allowed")
	}
	for i, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > 127 ||
			i > 0 && (r >= '0' && r <= '9' || r == '_')
		if !ok {
			if i == 0 {
				return mongoerr.New(16870, "'%s' starts with an invalid character for a user variable name", name)
			}
			return mongoerr.New(16871, "'%s' contains an invalid character for a variable name: '%c'", name, r)
		}
	}
	return nil
}

// validateVarWrite checks a variable name being defined by $let, $map, $filter or $reduce:
// user variables must start with a lowercase letter (or a non-ASCII character).
func validateVarWrite(name string) error {
	if name == "" {
		return mongoerr.New(16866, "empty variable names are not allowed")
	}
	for i, r := range name {
		ok := r >= 'a' && r <= 'z' || r > 127 ||
			i > 0 && (r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_')
		if !ok {
			if i == 0 {
				return mongoerr.New(16867, "'%s' starts with an invalid character for a user variable name", name)
			}
			return mongoerr.New(16868, "'%s' contains an invalid character for a variable name: '%c'", name, r)
		}
	}
	return nil
}

// walk follows an aggregation field path. Arrays are traversed implicitly: each element that
// is a document contributes its value at the rest of the path (missing ones are skipped), and
// nested arrays contribute nested results. Numeric components never index arrays here.
func walk(v any, parts []string) any {
	for i, p := range parts {
		switch x := v.(type) {
		case bson.D:
			val, ok := bsonkit.Get(x, p)
			if !ok {
				return bsonkit.Missing
			}
			v = val
		case bson.M:
			val, ok := x[p]
			if !ok {
				return bsonkit.Missing
			}
			v = val
		case bson.A:
			return walkArray(x, parts[i:])
		case []any:
			return walkArray(bson.A(x), parts[i:])
		default:
			return bsonkit.Missing
		}
	}
	return v
}

func walkArray(a bson.A, parts []string) bson.A {
	out := make(bson.A, 0, len(a))
	for _, e := range a {
		switch x := e.(type) {
		case bson.D, bson.M:
			if r := walk(x, parts); !bsonkit.IsMissing(r) {
				out = append(out, r)
			}
		case bson.A:
			out = append(out, walkArray(x, parts))
		case []any:
			out = append(out, walkArray(bson.A(x), parts))
		}
	}
	return out
}
