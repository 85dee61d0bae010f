package update

import (
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// node is one level of the update tree, as in mongod: a leaf holds a modifier; an object node
// has named children (plus the positional `$` child); an array node has children per
// arrayFilter identifier ("" for `$[]`) applied to every matching element.
type node struct {
	leaf       leafOp
	array      bool
	fields     []child // object node children, sorted by fieldLess after compile
	positional *node   // object node `$` child
	elems      []child // array node children by identifier
	path       string  // dotted path of the first leaf added below (for messages)
}

type child struct {
	name string
	n    *node
}

func (n *node) isLeaf() bool { return n.leaf != nil }

func (n *node) get(name string) *node {
	if name == "$" {
		return n.positional
	}
	list := n.fields
	if n.array {
		list = n.elems
	}
	for _, c := range list {
		if c.name == name {
			return c.n
		}
	}
	return nil
}

func (n *node) set(name string, c *node) {
	switch {
	case name == "$" && !n.array:
		n.positional = c
	case n.array:
		n.elems = append(n.elems, child{name, c})
	default:
		n.fields = append(n.fields, child{name, c})
	}
}

// finish sorts children into mongod's order: since 5.0, field names in byte order except that
// two numeric names compare numerically.
func (n *node) finish() {
	if len(n.fields) > 1 { // every statement compiles its update: no reflection, no work for one field
		slices.SortFunc(n.fields, func(a, b child) int {
			switch {
			case fieldLess(a.name, b.name):
				return -1
			case fieldLess(b.name, a.name):
				return 1
			}
			return 0
		})
	}
	for _, c := range n.fields {
		c.n.finish()
	}
	for _, c := range n.elems {
		c.n.finish()
	}
	if n.positional != nil {
		n.positional.finish()
	}
}

func fieldLess(a, b string) bool {
	if isNumeric(a) && isNumeric(b) {
		return len(a) < len(b) || (len(a) == len(b) && a < b)
	}
	return a < b
}

// isNumeric reports a strictly numeric path component (digits, no leading zero).
func isNumeric(s string) bool {
	_, ok := bsonkit.ArrayIndex(s)
	return ok
}

// operatorNames lists the update operators mongod accepts.
var operatorNames = map[string]bool{
	"$set": true, "$unset": true, "$inc": true, "$mul": true, "$min": true, "$max": true,
	"$rename": true, "$setOnInsert": true, "$currentDate": true, "$push": true,
	"$addToSet": true, "$pop": true, "$pull": true, "$pullAll": true, "$bit": true,
}

func compileOperators(u bson.D, opts Options) (*Update, error) {
	up := &Update{root: &node{}, vars: opts.Vars}
	filters, err := compileArrayFilters(opts.ArrayFilters, opts)
	if err != nil {
		return nil, err
	}
	up.filters = filters
	used := map[string]bool{}
	for _, op := range u {
		if !operatorNames[op.Key] {
			return nil, mongoerr.New(mongoerr.FailedToParse,
				"Unknown modifier: %s. Expected a valid update modifier or pipeline-style update specified as an array", op.Key)
		}
		spec, ok := op.Value.(bson.D)
		if !ok {
			return nil, mongoerr.New(mongoerr.FailedToParse,
				"Modifiers operate on fields but we found type %s instead. For example: {$mod: {<field>: ...}} not {%s}",
				bsonkit.TypeName(op.Value), formatElem(op.Key, op.Value))
		}
		for _, f := range spec {
			if err := up.addOperation(op.Key, f, used); err != nil {
				return nil, err
			}
		}
	}
	for _, f := range up.filters {
		if !used[f.id] {
			return nil, mongoerr.New(mongoerr.FailedToParse,
				"The array filter for identifier '%s' was not used in the update %s", f.id, formatValue(u))
		}
	}
	up.root.finish()
	return up, nil
}

// addOperation parses one {path: arg} of operator op and merges it into the tree.
func (up *Update) addOperation(op string, f bson.E, used map[string]bool) error {
	if op == "$rename" {
		return up.addRename(f, used)
	}
	parts, err := parsePath(f.Key)
	if err != nil {
		return err
	}
	leaf, err := newLeaf(op, f, up)
	if err != nil {
		return err
	}
	return up.merge(parts, f.Key, leaf, used)
}

func (up *Update) addRename(f bson.E, used map[string]bool) error {
	from, err := parsePath(f.Key)
	if err != nil {
		return err
	}
	r := &renameOp{from: from, fromPath: f.Key}
	if err := up.merge(from, f.Key, &renameSource{r}, used); err != nil {
		return err
	}
	to, ok := f.Value.(string)
	if !ok {
		return mongoerr.New(mongoerr.BadValue, "The 'to' field for $rename must be a string: %s", formatElem(f.Key, f.Value))
	}
	toParts, err := parsePath(to)
	if err != nil {
		return err
	}
	if isDynamic(from) {
		return mongoerr.New(mongoerr.BadValue, "The source field for $rename may not be dynamic: %s", f.Key)
	}
	if isDynamic(toParts) {
		return mongoerr.New(mongoerr.BadValue, "The destination field for $rename may not be dynamic: %s", to)
	}
	if f.Key == to {
		return mongoerr.New(mongoerr.BadValue, "The source and target field for $rename must differ: %s", formatElem(f.Key, f.Value))
	}
	if isPrefix(from, toParts) || isPrefix(toParts, from) {
		return mongoerr.New(mongoerr.BadValue, "The source and target field for $rename must not be on the same path: %s", formatElem(f.Key, f.Value))
	}
	r.to, r.toPath = toParts, to
	up.renames = append(up.renames, r)
	return up.merge(toParts, to, &renameDest{r}, used)
}

func isDynamic(parts []string) bool {
	for _, p := range parts {
		if p == "$" || isArrayFilterPart(p) {
			return true
		}
	}
	return false
}

func isPrefix(a, b []string) bool {
	if len(a) > len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func isArrayFilterPart(p string) bool {
	return len(p) >= 3 && p[0] == '$' && p[1] == '[' && p[len(p)-1] == ']'
}

// parsePath splits and validates an update path as mongod's fieldchecker does.
func parsePath(path string) ([]string, error) {
	if path == "" {
		return nil, mongoerr.New(mongoerr.EmptyFieldName, "An empty update path is not valid.")
	}
	parts := strings.Split(path, ".")
	positional := 0
	for i, p := range parts {
		if p == "" {
			return nil, mongoerr.New(mongoerr.EmptyFieldName,
				"The update path '%s' contains an empty field name, which is not allowed.", path)
		}
		if p == "$" {
			positional++
			if positional > 1 {
				return nil, mongoerr.New(mongoerr.BadValue, "Too many positional (i.e. '$') elements found in path '%s'", path)
			}
			if i == 0 {
				return nil, mongoerr.New(mongoerr.BadValue,
					"Cannot have positional (i.e. '$') element in the first position in path '%s'", path)
			}
		}
	}
	return parts, nil
}

// merge inserts leaf at parts, creating object/array nodes along the way and rejecting paths
// that overlap another update's path, with mongod's ConflictingUpdateOperators message.
func (up *Update) merge(parts []string, path string, leaf leafOp, used map[string]bool) error {
	cur := up.root
	for i, p := range parts {
		name := p
		if isArrayFilterPart(p) {
			id, err := up.identifier(p, i, path, used)
			if err != nil {
				return err
			}
			name = id
		}
		existing := cur.get(name)
		if i == len(parts)-1 {
			if existing != nil {
				return mongoerr.New(mongoerr.ConflictingUpdateOperators,
					"Updating the path '%s' would create a conflict at '%s'", path, path)
			}
			cur.set(name, &node{leaf: leaf, path: path})
			return nil
		}
		wantArray := isArrayFilterPart(parts[i+1])
		if existing != nil {
			if existing.isLeaf() || existing.array != wantArray {
				return mongoerr.New(mongoerr.ConflictingUpdateOperators,
					"Updating the path '%s' would create a conflict at '%s'", path, strings.Join(parts[:i+1], "."))
			}
		} else {
			existing = &node{array: wantArray, path: path}
			cur.set(name, existing)
		}
		cur = existing
	}
	return nil
}

func (up *Update) identifier(part string, pos int, path string, used map[string]bool) (string, error) {
	if pos == 0 {
		return "", mongoerr.New(mongoerr.BadValue,
			"Cannot have array filter identifier (i.e. '$[<id>]') element in the first position in path '%s'", path)
	}
	id := part[2 : len(part)-1]
	if id == "" {
		return "", nil
	}
	if up.filter(id) == nil {
		return "", mongoerr.New(mongoerr.BadValue, "No array filter found for identifier '%s' in path '%s'", id, path)
	}
	used[id] = true
	return id, nil
}

func (up *Update) filter(id string) *arrayFilter {
	for _, f := range up.filters {
		if f.id == id {
			return f
		}
	}
	return nil
}
