package query

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/expr"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// fieldPred is a parsed field-level condition. It becomes a node for a path ({a: {$gt: 1}})
// or a leaf applied to array elements directly ($elemMatch value form).
type fieldPred interface {
	node(path string) node
	leaf() leaf
}

type simplePred struct{ l leaf }

func (p simplePred) node(path string) node { return newPathNode(path, p.l) }
func (p simplePred) leaf() leaf            { return p.l }

// negPred negates a whole path match: {a: {$ne: 1}} matches when no element equals 1.
type negPred struct{ inner fieldPred }

func (p negPred) node(path string) node { return notNode{p.inner.node(path)} }
func (p negPred) leaf() leaf            { return notLeaf{p.inner.leaf()} }

// allPred requires every condition, each matched independently along the path ($all).
type allPred []fieldPred

func (p allPred) node(path string) node {
	if len(p) == 1 {
		return p[0].node(path)
	}
	out := make(andNode, len(p))
	for i, q := range p {
		out[i] = q.node(path)
	}
	return out
}

func (p allPred) leaf() leaf {
	if len(p) == 1 {
		return p[0].leaf()
	}
	out := make(andLeaf, len(p))
	for i, q := range p {
		out[i] = q.leaf()
	}
	return out
}

func badValue(format string, args ...any) error {
	return mongoerr.New(mongoerr.BadValue, format, args...)
}

// parseFilter compiles a query document: an implicit AND of its clauses.
func parseFilter(filter bson.D) (node, error) {
	if len(filter) == 1 {
		n, err := parseClause(filter[0])
		if err != nil || n != nil {
			return n, err
		}
		return constNode(true), nil
	}
	children := make(andNode, 0, len(filter))
	for _, e := range filter {
		n, err := parseClause(e)
		if err != nil {
			return nil, err
		}
		if n != nil {
			children = append(children, n)
		}
	}
	if len(children) == 1 {
		return children[0], nil
	}
	return children, nil
}

// parseClause compiles one top-level field of a query document; nil means "no condition".
func parseClause(e bson.E) (node, error) {
	if strings.HasPrefix(e.Key, "$") {
		return parseTopLevel(e)
	}
	if isPlainValue(e.Value) {
		return newEqNode(e.Key, normalize(e.Value)), nil
	}
	p, err := parseFieldValue(e.Value)
	if err != nil {
		return nil, err
	}
	return p.node(e.Key), nil
}

func parseTopLevel(e bson.E) (node, error) {
	switch e.Key {
	case "$and", "$or", "$nor":
		arr, ok := e.Value.(bson.A)
		if !ok || len(arr) == 0 {
			return nil, badValue("$and/$or/$nor must be a nonempty array")
		}
		children := make([]node, 0, len(arr))
		for _, c := range arr {
			d, ok := c.(bson.D)
			if !ok {
				return nil, badValue("$or/$and/$nor entries need to be full objects")
			}
			n, err := parseFilter(d)
			if err != nil {
				return nil, err
			}
			children = append(children, n)
		}
		switch e.Key {
		case "$and":
			if len(children) == 1 {
				return children[0], nil
			}
			return andNode(children), nil
		case "$or":
			if len(children) == 1 {
				return children[0], nil
			}
			return orNode(children), nil
		default:
			return norNode(children), nil
		}
	case "$expr":
		x, err := expr.Compile(e.Value)
		if err != nil {
			return nil, err
		}
		if v, ok := x.IsConstant(); ok {
			return constNode(expr.Truthy(v)), nil
		}
		return exprNode{e: x}, nil
	case "$comment":
		return nil, nil
	case "$alwaysTrue", "$alwaysFalse":
		if n, ok := e.Value.(int32); !ok || n != 1 {
			if f, ok := e.Value.(float64); !ok || f != 1 {
				return nil, badValue("%s must be an integer value of 1", e.Key)
			}
		}
		return constNode(e.Key == "$alwaysTrue"), nil
	case "$where":
		return nil, mongoerr.New(mongoerr.NotImplemented, "$where is not supported by this server")
	case "$text":
		return nil, mongoerr.New(mongoerr.IndexNotFound, "text index required for $text query")
	case "$jsonSchema":
		return nil, mongoerr.New(mongoerr.NotImplemented, "$jsonSchema is not supported by this server")
	}
	return nil, badValue("unknown top level operator: %s. If you have a field name that starts with a '$' symbol, consider using $getField or $setField.", e.Key)
}

// isOperatorDoc reports whether a field's value is a document of query operators rather than
// a document to compare for equality (DBRefs {$ref, $id, $db} are compared as documents).
func isOperatorDoc(v any) (bson.D, bool) {
	d, ok := v.(bson.D)
	if !ok || len(d) == 0 || !strings.HasPrefix(d[0].Key, "$") {
		return nil, false
	}
	switch d[0].Key {
	case "$ref", "$id", "$db":
		return nil, false
	}
	return d, true
}

// isPlainValue reports whether a field clause's value means plain equality.
func isPlainValue(v any) bool {
	switch x := v.(type) {
	case bson.Regex:
		return false
	case bson.D:
		_, isOps := isOperatorDoc(x)
		return !isOps
	}
	return true
}

// parseFieldValue compiles the value of a field clause: operators, a regex, or equality.
func parseFieldValue(v any) (fieldPred, error) {
	if ops, ok := isOperatorDoc(v); ok {
		return parseOperators(ops)
	}
	if re, ok := v.(bson.Regex); ok {
		l, err := newRegexLeaf(re.Pattern, re.Options)
		if err != nil {
			return nil, err
		}
		return simplePred{l}, nil
	}
	return simplePred{&cmpLeaf{op: opEQ, rhs: normalize(v)}}, nil
}

// normalize maps alternative Go representations of null onto nil.
func normalize(v any) any {
	if _, ok := v.(bson.Null); ok {
		return nil
	}
	return v
}

// parseOperators compiles an operator document such as {$gt: 1, $lt: 5}.
func parseOperators(ops bson.D) (fieldPred, error) {
	preds := make(allPred, 0, len(ops))
	for i, op := range ops {
		if op.Key == "$options" {
			if _, ok := bsonkit.Get(ops, "$regex"); !ok {
				return nil, badValue("$options needs a $regex")
			}
			continue
		}
		p, err := parseOperator(op, ops, i)
		if err != nil {
			return nil, err
		}
		if p != nil {
			preds = append(preds, p)
		}
	}
	if len(preds) == 0 {
		return simplePred{existsAlways{}}, nil
	}
	if len(preds) == 1 {
		return preds[0], nil
	}
	return preds, nil
}

// existsAlways matches anything, including missing fields (e.g. {a: {$comment: ...}}).
type existsAlways struct{}

func (existsAlways) matchValue(any, *matchCtx) bool { return true }

func parseOperator(op bson.E, siblings bson.D, idx int) (fieldPred, error) {
	v := op.Value
	switch op.Key {
	case "$eq":
		return simplePred{&cmpLeaf{op: opEQ, rhs: normalize(v)}}, nil
	case "$lt", "$lte", "$gt", "$gte":
		if _, isRe := v.(bson.Regex); isRe {
			return nil, badValue("Can't have RegEx as arg to predicate over field")
		}
		return simplePred{&cmpLeaf{op: cmpOps[op.Key], rhs: normalize(v)}}, nil
	case "$ne":
		if _, isRe := v.(bson.Regex); isRe {
			return nil, badValue("Can't have regex as arg to $ne.")
		}
		return negPred{simplePred{&cmpLeaf{op: opEQ, rhs: normalize(v)}}}, nil
	case "$in", "$nin":
		l, err := parseIn(op.Key, v)
		if err != nil {
			return nil, err
		}
		if op.Key == "$nin" {
			return negPred{simplePred{l}}, nil
		}
		return simplePred{l}, nil
	case "$exists":
		if truthy(v) {
			return simplePred{existsLeaf{}}, nil
		}
		return negPred{simplePred{existsLeaf{}}}, nil
	case "$type":
		l, err := parseType(v)
		if err != nil {
			return nil, err
		}
		return simplePred{l}, nil
	case "$size":
		n, err := parseSize(v)
		if err != nil {
			return nil, err
		}
		return simplePred{sizeLeaf{n: n}}, nil
	case "$mod":
		return parseMod(v)
	case "$regex":
		return parseRegexOp(v, siblings)
	case "$not":
		return parseNot(v)
	case "$all":
		return parseAll(v)
	case "$elemMatch":
		return parseElemMatch(v)
	case "$bitsAllSet", "$bitsAnySet", "$bitsAllClear", "$bitsAnyClear":
		return parseBits(op.Key, v)
	case "$comment":
		return nil, nil
	case "$near", "$nearSphere", "$geoWithin", "$geoIntersects", "$within", "$geoNear":
		return nil, mongoerr.New(mongoerr.NotImplemented, "geospatial operator %s is not supported by this server", op.Key)
	}
	return nil, badValue("unknown operator: %s", op.Key)
}

var cmpOps = map[string]cmpOp{"$lt": opLT, "$lte": opLTE, "$gt": opGT, "$gte": opGTE}

// truthy is BSONElement::trueValue: false, null, missing and numeric zero are false.
func truthy(v any) bool {
	switch x := v.(type) {
	case nil, bson.Null, bson.Undefined:
		return false
	case bool:
		return x
	case int32:
		return x != 0
	case int64:
		return x != 0
	case float64:
		return x != 0
	case bson.Decimal128:
		return !x.IsZero()
	}
	return true
}

func parseIn(name string, v any) (*inLeaf, error) {
	arr, ok := v.(bson.A)
	if !ok {
		return nil, badValue("%s needs an array", name)
	}
	var vals []any
	var regexes []*regexLeaf
	for _, x := range arr {
		if re, ok := x.(bson.Regex); ok {
			r, err := newRegexLeaf(re.Pattern, re.Options)
			if err != nil {
				return nil, err
			}
			regexes = append(regexes, r)
			continue
		}
		if _, isOp := isOperatorDoc(x); isOp {
			return nil, badValue("cannot nest $ under %s", name)
		}
		vals = append(vals, normalize(x))
	}
	return newInLeaf(vals, regexes), nil
}

func parseSize(v any) (int64, error) {
	if !bsonkit.IsNumber(v) {
		return 0, badValue("$size needs a number")
	}
	n, ok := bsonkit.ToInt64Exact(v)
	if !ok {
		return 0, badValue("$size must be a whole number")
	}
	if n < 0 {
		return 0, badValue("$size may not be negative")
	}
	return n, nil
}

func parseMod(v any) (fieldPred, error) {
	arr, ok := v.(bson.A)
	if !ok {
		return nil, badValue("malformed mod, needs to be an array")
	}
	if len(arr) < 2 {
		return nil, badValue("malformed mod, not enough elements")
	}
	if len(arr) > 2 {
		return nil, badValue("malformed mod, too many elements")
	}
	if !bsonkit.IsNumber(arr[0]) {
		return nil, badValue("malformed mod, divisor not a number")
	}
	if !bsonkit.IsNumber(arr[1]) {
		return nil, badValue("malformed mod, remainder not a number")
	}
	d, ok1 := truncToInt64(arr[0])
	r, ok2 := truncToInt64(arr[1])
	if !ok1 || !ok2 {
		return nil, badValue("malformed mod, divisor and remainder must be finite numbers")
	}
	if d == 0 {
		return nil, badValue("divisor cannot be 0")
	}
	return simplePred{modLeaf{divisor: d, remainder: r}}, nil
}

func parseType(v any) (*typeLeaf, error) {
	l := &typeLeaf{}
	add := func(x any) error {
		if s, ok := x.(string); ok {
			if s == "number" {
				l.number = true
				return nil
			}
			code, ok := bsonkit.TypeCodeByName(s)
			if !ok {
				return badValue("Unknown type name alias: %s", s)
			}
			l.codes = append(l.codes, code)
			return nil
		}
		if !bsonkit.IsNumber(x) {
			return mongoerr.New(mongoerr.TypeMismatch, "type must be represented as a number or a string")
		}
		n, ok := bsonkit.ToInt64Exact(x)
		if !ok {
			return badValue("Invalid numerical type code: %s", bsonkit.FormatNumber(x))
		}
		if !validTypeCode(n) {
			return badValue("Invalid numerical type code: %d", n)
		}
		l.codes = append(l.codes, int(n))
		return nil
	}
	if arr, ok := v.(bson.A); ok {
		for _, x := range arr {
			if err := add(x); err != nil {
				return nil, err
			}
		}
		return l, nil
	}
	if err := add(v); err != nil {
		return nil, err
	}
	return l, nil
}

func parseNot(v any) (fieldPred, error) {
	if re, ok := v.(bson.Regex); ok {
		l, err := newRegexLeaf(re.Pattern, re.Options)
		if err != nil {
			return nil, err
		}
		return negPred{simplePred{l}}, nil
	}
	d, ok := v.(bson.D)
	if !ok {
		return nil, badValue("$not needs a regex or a document")
	}
	if len(d) == 0 {
		return nil, badValue("$not cannot be empty")
	}
	for _, e := range d {
		if !strings.HasPrefix(e.Key, "$") {
			return nil, badValue("unknown operator: %s", e.Key)
		}
	}
	inner, err := parseOperators(d)
	if err != nil {
		return nil, err
	}
	return negPred{inner}, nil
}

func parseAll(v any) (fieldPred, error) {
	arr, ok := v.(bson.A)
	if !ok {
		return nil, badValue("$all needs an array")
	}
	if len(arr) == 0 {
		return simplePred{neverLeaf{}}, nil
	}
	preds := make(allPred, 0, len(arr))
	elemMatches := 0
	for _, x := range arr {
		if d, ok := x.(bson.D); ok && len(d) > 0 && d[0].Key == "$elemMatch" {
			if len(d) != 1 {
				return nil, badValue("$elemMatch in $all must be the only key")
			}
			p, err := parseElemMatch(d[0].Value)
			if err != nil {
				return nil, err
			}
			preds = append(preds, p)
			elemMatches++
			continue
		}
		if _, isOp := isOperatorDoc(x); isOp {
			return nil, badValue("no $ expressions in $all")
		}
		p, err := parseFieldValue(x) // regexes match, anything else is equality
		if err != nil {
			return nil, err
		}
		preds = append(preds, p)
	}
	if elemMatches > 0 && elemMatches != len(arr) {
		return nil, badValue("$all/$elemMatch has to be consistent")
	}
	return preds, nil
}

type neverLeaf struct{}

func (neverLeaf) matchValue(any, *matchCtx) bool { return false }

// topLevelOps are the operators that make an $elemMatch document a query on element
// documents rather than a set of operators on element values.
var topLevelOps = map[string]bool{
	"$and": true, "$or": true, "$nor": true, "$expr": true, "$where": true, "$text": true,
	"$comment": true, "$jsonSchema": true, "$alwaysTrue": true, "$alwaysFalse": true,
}

func parseElemMatch(v any) (fieldPred, error) {
	d, ok := v.(bson.D)
	if !ok {
		return nil, badValue("$elemMatch needs an Object")
	}
	if ops, isOps := isOperatorDoc(d); isOps && !topLevelOps[ops[0].Key] {
		preds := make([]leaf, 0, len(ops))
		for i, op := range ops {
			if op.Key == "$options" {
				continue
			}
			if !strings.HasPrefix(op.Key, "$") {
				return nil, badValue("unknown operator: %s", op.Key)
			}
			p, err := parseOperator(op, ops, i)
			if err != nil {
				return nil, err
			}
			if p != nil {
				preds = append(preds, p.leaf())
			}
		}
		return simplePred{elemMatchValueLeaf{preds: preds}}, nil
	}
	sub, err := parseFilter(d)
	if err != nil {
		return nil, err
	}
	return simplePred{elemMatchObjLeaf{sub: sub}}, nil
}

func validTypeCode(n int64) bool {
	return (n >= bsonkit.TypeDouble && n <= bsonkit.TypeDecimal) || n == bsonkit.TypeMinKey || n == bsonkit.TypeMaxKey
}
