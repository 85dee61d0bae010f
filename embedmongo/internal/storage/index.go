package storage

import (
	"encoding/binary"
	"math"
	"slices"
	"strings"

	"github.com/google/btree"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
	"github.com/bankd/bankd/embedmongo/internal/query"
)

// index is one index's entries: (key values, record id), ordered by bsonkit.Compare on the
// values (ascending whatever the key's direction: the index only narrows candidates, it never
// orders results).
type index struct {
	spec     IndexSpec
	parts    [][]string // each key field's path, split at dots
	partial  *query.Matcher
	tree     *btree.BTreeG[entry]
	multikey bool // some document gave more than one key; bounds on one field cannot be intersected
	// byString answers equality on a string for the _id index without a tree search (the
	// commonest lookup of all: every write by _id). _id is unique and never an array, and a
	// string equals only strings and symbols of the same content, so each content has at
	// most one record. nil on other indexes.
	byString map[string]RecordID
}

// entry is one index entry. key is the single field's value, or a compoundKey: a separate
// slice only for compound indexes keeps a million-document index small. sum is the key's
// summary, which settles most comparisons without loading the key.
type entry struct {
	key any
	id  RecordID
	sum uint64
}

func newEntry(key any, id RecordID) entry { return entry{key: key, id: id, sum: summary(key)} }

// pivot is the first possible entry with key, to start lookups from.
func pivot(key any) entry { return entry{key: key, id: math.MinInt64, sum: summary(key)} }

// summary orders keys as compareKeys does, only coarser: by the type bracket of the first
// value and, for a string, its first seven bytes (zero-padded, which orders as the shorter
// string first, as byte order does); for an array, by its first element's bracket and, for
// a string, first six bytes. So summary(a) < summary(b) implies a < b, and a tree
// of distinct strings (ids, account numbers) is searched by comparing integers, with the
// strings themselves, scattered over the heap, loaded only where summaries are equal.
func summary(key any) uint64 {
	if keyLen(key) == 0 {
		return 0 // the empty prefix sorts first, as compareKeys has it
	}
	v := keyAt(key, 0)
	var head [8]byte
	head[0] = byte(bsonkit.CanonicalType(v) + 1) // brackets run from -1 (MinKey) to 127
	if str, ok := bsonkit.StringContent(v); ok {
		copy(head[1:], str)
	} else if a, ok := v.(bson.A); ok && len(a) > 0 {
		// An array (an element that is itself an array, or an empty array) orders by its
		// first element's bracket, then value; the empty array first (0).
		head[1] = byte(bsonkit.CanonicalType(a[0]) + 2)
		if str, ok := bsonkit.StringContent(a[0]); ok {
			copy(head[2:], str)
		}
	}
	return binary.BigEndian.Uint64(head[:])
}

// compoundKey is the key of a compound index entry, one value per key field.
type compoundKey []any

// ikey is a document's key before it is paired with its record id.
type ikey struct {
	key any
}

func keyLen(k any) int {
	if c, ok := k.(compoundKey); ok {
		return len(c)
	}
	return 1
}

func keyAt(k any, i int) any {
	if c, ok := k.(compoundKey); ok {
		return c[i]
	}
	return k
}

// packKey turns per-field values into an entry key.
func packKey(vals []any) any {
	if len(vals) == 1 {
		return vals[0]
	}
	return compoundKey(vals)
}

// compareKeys orders keys field by field; a shorter key (a lookup prefix) sorts first.
func compareKeys(a, b any) int {
	la, lb := keyLen(a), keyLen(b)
	for i := 0; i < la && i < lb; i++ {
		if c := bsonkit.Compare(keyAt(a, i), keyAt(b, i)); c != 0 {
			return c
		}
	}
	switch {
	case la < lb:
		return -1
	case la > lb:
		return 1
	}
	return 0
}

func lessEntry(a, b entry) bool {
	if a.sum != b.sum {
		return a.sum < b.sum
	}
	if c := compareKeys(a.key, b.key); c != 0 {
		return c < 0
	}
	return a.id < b.id
}

func newIndex(spec IndexSpec) (*index, error) {
	ix := &index{spec: spec, tree: btree.NewG(32, lessEntry)}
	if spec.Name == "_id_" {
		ix.byString = make(map[string]RecordID)
	}
	for _, f := range spec.Key {
		ix.parts = append(ix.parts, strings.Split(f.Key, "."))
	}
	if spec.PartialFilterExpression != nil {
		m, err := query.Compile(spec.PartialFilterExpression, query.Options{})
		if err != nil {
			return nil, mongoerr.New(mongoerr.CannotCreateIndex,
				"Error in specification %s :: caused by :: %v", bsonkit.Format(spec.Spec), mongoerr.As(err).Msg)
		}
		ix.partial = m
	}
	return ix, nil
}

func (ix *index) field(i int) string { return ix.spec.Key[i].Key }

func (ix *index) insert(id RecordID, keys []ikey) {
	if len(keys) > 1 {
		ix.multikey = true
	}
	for _, k := range keys {
		ix.tree.ReplaceOrInsert(newEntry(k.key, id))
		if s, ok := ix.stringEntry(k); ok {
			ix.byString[s] = id
		}
	}
}

func (ix *index) delete(id RecordID, keys []ikey) {
	for _, k := range keys {
		ix.tree.Delete(newEntry(k.key, id))
		if s, ok := ix.stringEntry(k); ok && ix.byString[s] == id {
			delete(ix.byString, s)
		}
	}
}

// stringEntry reports whether k belongs in byString, and under which string.
func (ix *index) stringEntry(k ikey) (string, bool) {
	if ix.byString == nil {
		return "", false
	}
	return bsonkit.StringContent(k.key)
}

// keyVal is one value a path yields; missing values index as null.
type keyVal struct {
	v       any
	missing bool
}

// keysOf computes doc's index keys: one per combination of the values each key field yields
// (array elements expand to one key each, multikey), deduplicated.
func (ix *index) keysOf(doc bson.D) ([]ikey, error) {
	if ix.partial != nil {
		if ok, err := ix.partial.Match(doc); err != nil || !ok {
			return nil, nil
		}
	}
	per := make([][]keyVal, len(ix.parts))
	arrayAt := make([]string, len(ix.parts))
	allMissing := true
	for i, parts := range ix.parts {
		arr := -1
		per[i] = collect(doc, parts, 0, nil, &arr)
		if arr >= 0 {
			arrayAt[i] = strings.Join(parts[:arr], ".")
		} else {
			arrayAt[i] = "\x00" // no array
		}
		for _, kv := range per[i] {
			if !kv.missing {
				allMissing = false
			}
		}
	}
	if ix.spec.Sparse && allMissing {
		return nil, nil
	}
	// Two key fields through different arrays would need a cross product: mongod refuses.
	for i := range arrayAt {
		for j := i + 1; j < len(arrayAt); j++ {
			if arrayAt[i] != "\x00" && arrayAt[j] != "\x00" && arrayAt[i] != arrayAt[j] {
				return nil, &mongoerr.Error{Code: 171, Name: "CannotIndexParallelArrays",
					Msg: "cannot index parallel arrays [" + lastPart(arrayAt[j]) + "] [" + lastPart(arrayAt[i]) + "]"}
			}
		}
	}
	combos := [][]any{make([]any, 0, len(per))}
	for _, vals := range per {
		next := make([][]any, 0, len(combos)*len(vals))
		for _, k := range combos {
			for _, kv := range vals {
				v := kv.v
				if kv.missing {
					v = nil
				}
				next = append(next, append(append(make([]any, 0, len(per)), k...), v))
			}
		}
		combos = next
	}
	keys := make([]ikey, len(combos))
	for i, vals := range combos {
		keys[i] = ikey{key: packKey(vals)}
	}
	if len(keys) > 1 {
		slices.SortFunc(keys, func(a, b ikey) int { return compareKeys(a.key, b.key) })
		out := keys[:1]
		for _, k := range keys[1:] {
			if compareKeys(out[len(out)-1].key, k.key) != 0 {
				out = append(out, k)
			}
		}
		keys = out
	}
	return keys, nil
}

func lastPart(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[i+1:]
	}
	return path
}

// collect appends the values path parts[i:] yields under v, traversing arrays as queries do:
// an array at the end of the path yields its elements (an empty one itself); an array in the
// middle yields what its document elements yield, and its element at a numeric component.
// *arrayAt receives the depth of the first array met.
func collect(v any, parts []string, i int, out []keyVal, arrayAt *int) []keyVal {
	if i == len(parts) {
		a, ok := v.(bson.A)
		if !ok {
			return append(out, keyVal{v: v})
		}
		if *arrayAt < 0 {
			*arrayAt = i
		}
		if len(a) == 0 {
			return append(out, keyVal{v: bson.A{}})
		}
		for _, e := range a {
			out = append(out, keyVal{v: e})
		}
		return out
	}
	switch x := v.(type) {
	case bson.D:
		val, ok := bsonkit.Get(x, parts[i])
		if !ok {
			return append(out, keyVal{missing: true})
		}
		return collect(val, parts, i+1, out, arrayAt)
	case bson.A:
		if *arrayAt < 0 {
			*arrayAt = i
		}
		var found []keyVal
		if n, ok := bsonkit.ArrayIndex(parts[i]); ok && n < len(x) {
			found = collect(x[n], parts, i+1, found, arrayAt)
		}
		for _, e := range x {
			if d, ok := e.(bson.D); ok {
				found = collect(d, parts, i, found, arrayAt)
			}
		}
		n := len(out)
		for _, kv := range found {
			if !kv.missing {
				out = append(out, kv)
			}
		}
		if len(out) == n {
			out = append(out, keyVal{missing: true})
		}
		return out
	default:
		return append(out, keyVal{missing: true})
	}
}

// checkUnique fails with DuplicateKey when another document (not self) has one of keys.
func (c *Collection) checkUnique(ix *index, keys []ikey, self RecordID) error {
	for _, k := range keys {
		if s, ok := ix.stringEntry(k); ok {
			if id, found := ix.byString[s]; found && id != self {
				return c.dupKeyError(ix, k.key)
			}
			continue
		}
		var dup bool
		ix.tree.AscendGreaterOrEqual(pivot(k.key), func(e entry) bool {
			if compareKeys(e.key, k.key) != 0 {
				return false
			}
			if e.id != self {
				dup = true
				return false
			}
			return true
		})
		if dup {
			return c.dupKeyError(ix, k.key)
		}
	}
	return nil
}

// dupKeyError is mongod's E11000 error with keyPattern and keyValue.
func (c *Collection) dupKeyError(ix *index, key any) error {
	keyValue := make(bson.D, keyLen(key))
	for i := range keyValue {
		keyValue[i] = bson.E{Key: ix.field(i), Value: bsonkit.DeepCopy(keyAt(key, i))}
	}
	return &mongoerr.Error{
		Code: mongoerr.DuplicateKey,
		Name: mongoerr.Name(mongoerr.DuplicateKey),
		Msg: "E11000 duplicate key error collection: " + c.db + "." + c.name + " index: " +
			ix.spec.Name + " dup key: " + bsonkit.Format(keyValue),
		Extra: bson.D{{Key: "keyPattern", Value: cloneD(ix.spec.Key)}, {Key: "keyValue", Value: keyValue}},
	}
}

// touchedBy reports whether a change to the given top-level fields can change the index's keys.
func (ix *index) touchedBy(fields []string) bool {
	for _, parts := range ix.parts {
		for _, f := range fields {
			if parts[0] == f {
				return true
			}
		}
	}
	return false
}
