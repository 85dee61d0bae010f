package storage

import (
	"math"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// invalidIndexOption is mongod's InvalidIndexSpecificationOption (197).
func invalidIndexOption(format string, args ...any) error {
	e := mongoerr.New(197, format, args...)
	e.Name = "InvalidIndexSpecificationOption"
	return e
}

// ParseIndexSpec reads one element of createIndexes' "indexes" array ({key, name, unique,
// sparse, expireAfterSeconds, partialFilterExpression, ...}) into an IndexSpec, with mongod's
// errors for invalid specifications. A missing name is generated as mongod does ("a_1_b_-1").
func ParseIndexSpec(doc bson.D) (IndexSpec, error) {
	var spec IndexSpec
	hasKey := false
	for _, e := range doc {
		switch e.Key {
		case "key":
			d, ok := e.Value.(bson.D)
			if !ok {
				return spec, mongoerr.New(mongoerr.TypeMismatch,
					"The field 'key' must be an object, but got %s", bsonkit.TypeName(e.Value))
			}
			spec.Key, hasKey = d, true
		case "name":
			s, ok := e.Value.(string)
			if !ok {
				return spec, mongoerr.New(mongoerr.TypeMismatch,
					"The field 'name' must be a string, but got %s", bsonkit.TypeName(e.Value))
			}
			spec.Name = s
		case "unique":
			spec.Unique = truthy(e.Value)
		case "sparse":
			spec.Sparse = truthy(e.Value)
		case "expireAfterSeconds":
			f, ok := bsonkit.ToFloat64(e.Value)
			if !ok || math.IsNaN(f) || f < 0 || f > math.MaxInt32 {
				return spec, mongoerr.New(mongoerr.CannotCreateIndex,
					"TTL index 'expireAfterSeconds' option must be within an acceptable range, try a lower number")
			}
			n := int64(f)
			spec.ExpireAfterSeconds = &n
		case "partialFilterExpression":
			d, ok := e.Value.(bson.D)
			if !ok {
				return spec, mongoerr.New(mongoerr.TypeMismatch,
					"The field 'partialFilterExpression' must be an object, but got %s", bsonkit.TypeName(e.Value))
			}
			spec.PartialFilterExpression = d
		case "v", "ns", "background", "hidden", "collation", "storageEngine", "weights",
			"default_language", "language_override", "textIndexVersion", "2dsphereIndexVersion",
			"bits", "min", "max", "bucketSize", "wildcardProjection", "prepareUnique", "clustered":
			// accepted and shown by listIndexes; they do not change what this engine stores
		default:
			return spec, invalidIndexOption("The field '%s' is not valid for an index specification. Specification: %s",
				e.Key, bsonkit.Format(doc))
		}
	}
	if !hasKey {
		return spec, mongoerr.New(mongoerr.FailedToParse,
			"The 'key' field is a required property of an index specification")
	}
	spec.Spec = doc
	return normalizeSpec(spec)
}

func truthy(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case nil, bson.Null, bson.Undefined:
		return false
	}
	if f, ok := bsonkit.ToFloat64(v); ok {
		return f != 0
	}
	return true
}

// normalizeSpec validates spec's key, names it when unnamed and builds the listIndexes
// document: {v: 2, key, name} then the options, in the order given.
func normalizeSpec(spec IndexSpec) (IndexSpec, error) {
	if len(spec.Key) == 0 {
		return spec, mongoerr.New(mongoerr.CannotCreateIndex, "Index keys cannot be empty.")
	}
	seen := map[string]bool{}
	for _, f := range spec.Key {
		if f.Key == "" || strings.HasPrefix(f.Key, "$") || strings.Contains(f.Key, "..") ||
			strings.HasPrefix(f.Key, ".") || strings.HasSuffix(f.Key, ".") {
			return spec, mongoerr.New(mongoerr.CannotCreateIndex,
				"Index key contains an illegal field name: '%s'", f.Key)
		}
		if seen[f.Key] {
			return spec, mongoerr.New(mongoerr.CannotCreateIndex,
				"Error in specification %s :: caused by :: Index key contains a duplicate field: %s",
				bsonkit.Format(spec.Key), f.Key)
		}
		seen[f.Key] = true
		if s, ok := f.Value.(string); ok {
			return spec, mongoerr.New(mongoerr.CannotCreateIndex,
				"Index type '%s' is not supported by this engine: only ascending (1) and descending (-1) indexes are", s)
		}
		n, ok := bsonkit.ToFloat64(f.Value)
		if !ok || n == 0 || math.IsNaN(n) {
			return spec, mongoerr.New(mongoerr.CannotCreateIndex,
				"Error in specification %s :: caused by :: Values in the index key pattern can only be numbers > 0, numbers < 0, and strings. Found: %s",
				bsonkit.Format(spec.Key), bsonkit.Format(f.Value))
		}
	}
	if spec.ExpireAfterSeconds != nil && len(spec.Key) > 1 {
		return spec, mongoerr.New(mongoerr.CannotCreateIndex,
			"TTL indexes are single-field indexes, compound indexes do not support TTL. Index spec: %s",
			bsonkit.Format(spec.Key))
	}
	if spec.Name == "" {
		spec.Name = DefaultIndexName(spec.Key)
	}
	out := bson.D{{Key: "v", Value: int32(2)}, {Key: "key", Value: cloneD(spec.Key)}, {Key: "name", Value: spec.Name}}
	have := map[string]bool{"v": true, "key": true, "name": true, "ns": true}
	for _, e := range spec.Spec {
		if !have[e.Key] {
			have[e.Key] = true
			out = append(out, bson.E{Key: e.Key, Value: bsonkit.DeepCopy(e.Value)})
		}
	}
	add := func(key string, v any) {
		if !have[key] {
			out = append(out, bson.E{Key: key, Value: v})
		}
	}
	if spec.Unique && spec.Name != "_id_" {
		add("unique", true)
	}
	if spec.Sparse {
		add("sparse", true)
	}
	if spec.ExpireAfterSeconds != nil {
		add("expireAfterSeconds", int32(*spec.ExpireAfterSeconds))
	}
	if spec.PartialFilterExpression != nil {
		add("partialFilterExpression", cloneD(spec.PartialFilterExpression))
	}
	spec.Spec = out
	return spec, nil
}

// DefaultIndexName is mongod's generated index name: fields and directions joined by "_".
func DefaultIndexName(key bson.D) string {
	parts := make([]string, 0, 2*len(key))
	for _, f := range key {
		var v string
		switch x := f.Value.(type) {
		case string:
			v = x
		case float64:
			v = strconv.FormatFloat(x, 'g', -1, 64)
		default:
			v = bsonkit.FormatNumber(x)
		}
		parts = append(parts, f.Key, v)
	}
	return strings.Join(parts, "_")
}

func (s IndexSpec) clone() IndexSpec {
	out := s
	out.Key = cloneD(s.Key)
	out.PartialFilterExpression = cloneD(s.PartialFilterExpression)
	out.Spec = cloneD(s.Spec)
	if s.ExpireAfterSeconds != nil {
		n := *s.ExpireAfterSeconds
		out.ExpireAfterSeconds = &n
	}
	return out
}

// sameOptions compares what makes two indexes on the same key different indexes.
func sameOptions(a, b IndexSpec) bool {
	ea, eb := int64(-1), int64(-1)
	if a.ExpireAfterSeconds != nil {
		ea = *a.ExpireAfterSeconds
	}
	if b.ExpireAfterSeconds != nil {
		eb = *b.ExpireAfterSeconds
	}
	return a.Unique == b.Unique && a.Sparse == b.Sparse && ea == eb &&
		samePartial(a, b)
}

func samePartial(a, b IndexSpec) bool {
	return bsonkit.Compare(orEmpty(a.PartialFilterExpression), orEmpty(b.PartialFilterExpression)) == 0
}

func orEmpty(d bson.D) bson.D {
	if d == nil {
		return bson.D{}
	}
	return d
}

// sameKey compares key patterns field by field; 1 and 1.0 are the same direction.
func sameKey(a, b bson.D) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Key != b[i].Key || bsonkit.Compare(a[i].Value, b[i].Value) != 0 {
			return false
		}
	}
	return true
}

// CreateIndexes adds indexes; returns how many were new. Existing identical ones are no-ops;
// same name with different options is IndexOptionsConflict (85) / IndexKeySpecsConflict (86);
// building a unique index over duplicates is DuplicateKey (11000). Either every new index is
// built or none is.
func (c *Collection) CreateIndexes(specs []IndexSpec) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0, errShutdown()
	}
	if c.dropped {
		return 0, mongoerr.New(mongoerr.NamespaceNotFound,
			"collection %s.%s was dropped during the operation; retry it", c.db, c.name)
	}
	if err := c.store.checkWritable(); err != nil {
		return 0, err
	}
	var added []*index
	for _, sp := range specs {
		if sp.Key == nil && sp.Spec != nil {
			parsed, err := ParseIndexSpec(sp.Spec)
			if err != nil {
				return 0, err
			}
			sp = parsed
		} else {
			var err error
			if sp, err = normalizeSpec(sp); err != nil {
				return 0, err
			}
		}
		exists, err := conflict(append(c.indexes[:len(c.indexes):len(c.indexes)], added...), sp)
		if err != nil {
			return 0, err
		}
		if exists {
			continue
		}
		ix, err := newIndex(sp)
		if err != nil {
			return 0, err
		}
		if err := c.build(ix); err != nil {
			return 0, err
		}
		added = append(added, ix)
	}
	if len(added) == 0 {
		return 0, nil
	}
	prev := c.indexes
	c.indexes = append(c.indexes[:len(c.indexes):len(c.indexes)], added...)
	if err := c.store.persistCatalog(c); err != nil {
		c.indexes = prev
		return 0, err
	}
	return len(added), nil
}

// conflict reports whether sp already exists identically among indexes, or why it cannot be
// created next to them.
func conflict(indexes []*index, sp IndexSpec) (bool, error) {
	for _, ix := range indexes {
		cur := ix.spec
		switch {
		case cur.Name == sp.Name && !sameKey(cur.Key, sp.Key):
			return false, mongoerr.New(mongoerr.IndexKeySpecsConflict,
				"An existing index has the same name as the requested index. When index names are not specified, they are auto generated and can cause conflicts. Please refer to our documentation. Requested index: %s, existing index: %s",
				bsonkit.Format(sp.Spec), bsonkit.Format(cur.Spec))
		case cur.Name == sp.Name && (cur.Name == "_id_" || sameOptions(cur, sp)):
			return true, nil
		case cur.Name == sp.Name:
			return false, mongoerr.New(mongoerr.IndexOptionsConflict,
				"An existing index has the same name as the requested index. When index names are not specified, they are auto generated and can cause conflicts. Please refer to our documentation. Requested index: %s, existing index: %s",
				bsonkit.Format(sp.Spec), bsonkit.Format(cur.Spec))
		case sameKey(cur.Key, sp.Key) && samePartial(cur, sp):
			return false, mongoerr.New(mongoerr.IndexOptionsConflict,
				"Index already exists with a different name: %s", cur.Name)
		}
	}
	return false, nil
}

// build indexes every document into ix, failing on a unique violation.
func (c *Collection) build(ix *index) error {
	var err error
	c.docs.Ascend(func(r record) bool {
		var d bson.D
		if d, err = r.decode(); err != nil {
			return false
		}
		var keys []ikey
		if keys, err = ix.keysOf(d); err != nil {
			return false
		}
		if ix.spec.Unique {
			if err = c.checkUnique(ix, keys, r.id); err != nil {
				return false
			}
		}
		ix.insert(r.id, keys)
		return true
	})
	return err
}

// DropIndex drops an index by name ("*" drops all but _id); IndexNotFound (27) when absent.
func (c *Collection) DropIndex(name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return errShutdown()
	}
	if c.dropped {
		return mongoerr.New(mongoerr.NamespaceNotFound, "ns not found %s.%s", c.db, c.name)
	}
	if err := c.store.checkWritable(); err != nil {
		return err
	}
	if name == "_id_" {
		return mongoerr.New(mongoerr.InvalidOptions, "cannot drop _id index")
	}
	prev := c.indexes
	if name == "*" {
		c.indexes = c.indexes[:1:1]
	} else {
		i := c.indexByName(name)
		if i < 0 {
			return mongoerr.New(mongoerr.IndexNotFound, "index not found with name [%s]", name)
		}
		c.indexes = append(c.indexes[:i:i], c.indexes[i+1:]...)
	}
	if err := c.store.persistCatalog(c); err != nil {
		c.indexes = prev
		return err
	}
	return nil
}

func (c *Collection) indexByName(name string) int {
	for i, ix := range c.indexes {
		if ix.spec.Name == name {
			return i
		}
	}
	return -1
}
