package bsonkit

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Get returns the value of a top-level field of d and whether it exists.
func Get(d bson.D, key string) (any, bool) {
	for _, e := range d {
		if e.Key == key {
			return e.Value, true
		}
	}
	return nil, false
}

// Set replaces the first field named key in place, or appends it, and returns the document.
func Set(d bson.D, key string, v any) bson.D {
	for i := range d {
		if d[i].Key == key {
			d[i].Value = v
			return d
		}
	}
	return append(d, bson.E{Key: key, Value: v})
}

// Remove deletes the field named key and returns the document (a new slice header).
func Remove(d bson.D, key string) bson.D {
	for i := range d {
		if d[i].Key == key {
			out := make(bson.D, 0, len(d)-1)
			out = append(out, d[:i]...)
			return append(out, d[i+1:]...)
		}
	}
	return d
}

// GetPath follows a dotted path through embedded documents and, for numeric components, array
// indexes, without MongoDB's implicit array traversal (the query package does that). It returns
// Missing when any step is absent.
func GetPath(v any, path string) any {
	for _, part := range strings.Split(path, ".") {
		switch x := v.(type) {
		case bson.D:
			val, ok := Get(x, part)
			if !ok {
				return Missing
			}
			v = val
		case bson.A:
			i, ok := arrayIndex(part)
			if !ok || i >= len(x) {
				return Missing
			}
			v = x[i]
		default:
			return Missing
		}
	}
	return v
}

// arrayIndex parses a path component as a non-negative array index ("01" is not one).
func arrayIndex(s string) (int, bool) {
	if s == "" || len(s) > 9 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// ArrayIndex exposes arrayIndex: whether a path component names an array position.
func ArrayIndex(s string) (int, bool) { return arrayIndex(s) }

// DeepCopy copies documents and arrays recursively so a stored document is never aliased by a
// result being modified; scalars are immutable and shared.
func DeepCopy(v any) any {
	switch x := v.(type) {
	case bson.D:
		return CopyDoc(x)
	case bson.A:
		out := make(bson.A, len(x))
		for i, e := range x {
			out[i] = DeepCopy(e)
		}
		return out
	case bson.Binary:
		return bson.Binary{Subtype: x.Subtype, Data: append([]byte(nil), x.Data...)}
	}
	return v
}

// CopyDoc deep-copies a document.
func CopyDoc(d bson.D) bson.D {
	if d == nil {
		return nil
	}
	out := make(bson.D, len(d))
	for i, e := range d {
		out[i] = bson.E{Key: e.Key, Value: DeepCopy(e.Value)}
	}
	return out
}
