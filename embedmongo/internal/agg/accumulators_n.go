package agg

import (
	"sort"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/expr"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
	"github.com/bankd/bankd/embedmongo/internal/query"
)

// nAccumulators take an object argument ({input, n} or {sortBy, output[, n]}) rather than an
// expression: $firstN, $lastN, $minN, $maxN, $top, $bottom, $topN, $bottomN (MongoDB 5.2+).
var nAccumulators = map[string]bool{
	"$firstN": true, "$lastN": true, "$minN": true, "$maxN": true,
	"$top": true, "$bottom": true, "$topN": true, "$bottomN": true,
}

// nSpec is the parsed argument of an n-accumulator.
type nSpec struct {
	op     string
	input  *expr.Expr // input (firstN...) or output (top...)
	n      *expr.Expr // nil for $top/$bottom
	sortBy *query.Sort
}

func parseNSpec(op string, arg any) (*nSpec, error) {
	d, ok := arg.(bson.D)
	if !ok {
		return nil, mongoerr.New(5787801, "specification must be an object; found %s: %s", op, fmtValue(arg))
	}
	s := &nSpec{op: op}
	sorted := op == "$top" || op == "$bottom" || op == "$topN" || op == "$bottomN"
	hasN := op != "$top" && op != "$bottom"
	inputName := "input"
	if sorted {
		inputName = "output"
	}
	for _, e := range d {
		var err error
		switch {
		case e.Key == inputName:
			s.input, err = expr.Compile(e.Value)
		case e.Key == "n" && hasN:
			s.n, err = expr.Compile(e.Value)
		case e.Key == "sortBy" && sorted:
			sd, ok := e.Value.(bson.D)
			if !ok {
				return nil, mongoerr.New(5788604, "expected 'sortBy' to already be an object in the arguments to %s", op)
			}
			s.sortBy, err = query.CompileSort(sd)
		default:
			return nil, mongoerr.New(5787901, "Unknown argument for 'n' operator: %s", e.Key)
		}
		if err != nil {
			return nil, err
		}
	}
	switch {
	case s.input == nil:
		return nil, mongoerr.New(5787907, "Missing value for '%s'", inputName)
	case hasN && s.n == nil:
		return nil, mongoerr.New(5787906, "Missing value for 'n'")
	case sorted && s.sortBy == nil:
		return nil, mongoerr.New(5788604, "%s requires a 'sortBy' field", op)
	}
	return s, nil
}

// newAcc builds the accumulator of one group; n is evaluated against {_id: key}, since mongod
// lets it depend on the group key only.
func (s *nSpec) newAcc(key any, vars expr.Vars) (accumulator, error) {
	limit := int64(1)
	if s.n != nil {
		v, err := s.n.Eval(bson.D{{Key: "_id", Value: key}}, vars)
		if err != nil {
			return nil, err
		}
		n, ok := bsonkit.ToInt64Exact(v)
		if !ok {
			return nil, mongoerr.New(5787902, "Value for 'n' must be of integral type, but found %s", fmtValue(v))
		}
		if n <= 0 {
			return nil, mongoerr.New(5787908, "'n' must be greater than 0, found %d", n)
		}
		limit = n
	}
	return &nAcc{spec: s, limit: limit}, nil
}

// nAcc collects (sort document, value) pairs and selects at the end.
type nAcc struct {
	spec  *nSpec
	limit int64
	docs  []bson.D
	vals  bson.A
}

// addDoc feeds one input document; n-accumulators need the document itself for sortBy.
func (a *nAcc) addDoc(doc bson.D, vars expr.Vars) error {
	v, err := a.spec.input.Eval(doc, vars)
	if err != nil {
		return err
	}
	switch a.spec.op {
	case "$minN", "$maxN":
		if nullish(v) {
			return nil
		}
	case "$firstN":
		if int64(len(a.vals)) >= a.limit {
			return nil
		}
	}
	a.docs = append(a.docs, doc)
	a.vals = append(a.vals, missingToNull(v))
	return nil
}

func (a *nAcc) add(any) error { return nil }

func (a *nAcc) result() any {
	idx := make([]int, len(a.vals))
	for i := range idx {
		idx[i] = i
	}
	switch a.spec.op {
	case "$lastN":
		if int64(len(idx)) > a.limit {
			idx = idx[int64(len(idx))-a.limit:]
		}
	case "$minN", "$maxN":
		sign := 1
		if a.spec.op == "$maxN" {
			sign = -1
		}
		sort.SliceStable(idx, func(i, j int) bool { return sign*bsonkit.Compare(a.vals[idx[i]], a.vals[idx[j]]) < 0 })
	case "$top", "$topN", "$bottom", "$bottomN":
		sort.SliceStable(idx, func(i, j int) bool { return a.spec.sortBy.Compare(a.docs[idx[i]], a.docs[idx[j]]) < 0 })
		if a.spec.op == "$bottom" || a.spec.op == "$bottomN" {
			// The bottom n in sort order, still listed in sort order.
			if int64(len(idx)) > a.limit {
				idx = idx[int64(len(idx))-a.limit:]
			}
		}
	}
	if int64(len(idx)) > a.limit {
		idx = idx[:a.limit]
	}
	out := make(bson.A, len(idx))
	for i, k := range idx {
		out[i] = a.vals[k]
	}
	if a.spec.op == "$top" || a.spec.op == "$bottom" {
		if len(out) == 0 {
			return nil
		}
		return out[0]
	}
	return out
}
