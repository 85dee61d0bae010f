package agg

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/collation"
	"github.com/bankd/bankd/embedmongo/internal/expr"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
	"github.com/bankd/bankd/embedmongo/internal/query"
)

func parseMatch(r *runner, spec any, _ pipeCtx) (stage, error) {
	filter, ok := spec.(bson.D)
	if !ok {
		return nil, mongoerr.New(15959, "the match filter must be an expression in an object")
	}
	m, err := query.Compile(filter, query.Options{Vars: r.opts.Vars, Collation: r.opts.Collation})
	if err != nil {
		return nil, err
	}
	return func(in []bson.D) ([]bson.D, error) {
		out := make([]bson.D, 0, len(in))
		for _, d := range in {
			ok, err := m.Match(d)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, d)
			}
		}
		return out, nil
	}, nil
}

func parseReplaceRoot(r *runner, spec any, _ pipeCtx) (stage, error) {
	d, ok := spec.(bson.D)
	if !ok {
		return nil, mongoerr.New(40229, "expected an object as specification for $replaceRoot stage, got %s",
			bsonkit.TypeName(spec))
	}
	var newRoot any
	found := false
	for _, e := range d {
		if e.Key != "newRoot" {
			return nil, mongoerr.New(40415, "BSON field '$replaceRoot.%s' is an unknown field.", e.Key)
		}
		newRoot, found = e.Value, true
	}
	if !found {
		return nil, mongoerr.New(40414, "BSON field '$replaceRoot.newRoot' is missing but a required field")
	}
	return replaceRootStage(r, newRoot, "'newRoot' expression ")
}

func parseReplaceWith(r *runner, spec any, _ pipeCtx) (stage, error) {
	return replaceRootStage(r, spec, "'replacement document' ")
}

func replaceRootStage(r *runner, newRoot any, what string) (stage, error) {
	ex, err := expr.Compile(newRoot)
	if err != nil {
		return nil, err
	}
	return func(in []bson.D) ([]bson.D, error) {
		out := make([]bson.D, len(in))
		for i, d := range in {
			v, err := ex.Eval(d, r.opts.Vars)
			if err != nil {
				return nil, err
			}
			nd, ok := v.(bson.D)
			if !ok {
				return nil, mongoerr.New(40228, "%smust evaluate to an object, but resulting value was: %s. Type of resulting value: '%s'. Input document: %s",
					what, fmtValue(v), bsonkit.TypeName(v), fmtValue(d))
			}
			out[i] = nd
		}
		return out, nil
	}, nil
}

// compileSortSpec validates a $sort specification with $sort's own errors, then compiles it.
func compileSortSpec(spec any, coll *collation.Collation) (*query.Sort, error) {
	d, ok := spec.(bson.D)
	if !ok {
		return nil, mongoerr.New(15973, "the $sort key specification must be an object")
	}
	if len(d) == 0 {
		return nil, mongoerr.New(15976, "$sort stage must have at least one sort key")
	}
	for _, e := range d {
		if _, isMeta := e.Value.(bson.D); isMeta {
			continue // {$meta: ...}: left to the sort compiler
		}
		n, ok := bsonkit.ToInt64Exact(e.Value)
		if !ok || (n != 1 && n != -1) {
			return nil, mongoerr.New(15975, "$sort key ordering must be 1 (for ascending) or -1 (for descending)")
		}
	}
	return query.CompileSortCollation(d, coll)
}

func parseSort(r *runner, spec any, _ pipeCtx) (stage, error) {
	s, err := compileSortSpec(spec, r.opts.Collation)
	if err != nil {
		return nil, err
	}
	return sortStage(s), nil
}

func sortStage(s *query.Sort) stage {
	return func(in []bson.D) ([]bson.D, error) {
		out := append([]bson.D(nil), in...)
		sort.SliceStable(out, func(i, j int) bool { return s.Compare(out[i], out[j]) < 0 })
		return out, nil
	}
}

// nonNegativeLong parses $skip/$limit-style arguments: integral numbers, at least zero.
func nonNegativeLong(v any, stageName string) (int64, error) {
	if !isNumber(v) {
		return 0, fmt.Errorf("Expected a number in: %s: %s", stageName, fmtValue(v))
	}
	n, ok := bsonkit.ToInt64Exact(v)
	if !ok {
		return 0, fmt.Errorf("Expected an integer: %s: %s", stageName, fmtValue(v))
	}
	if n < 0 {
		return 0, fmt.Errorf("Expected a non-negative number in: %s: %d", stageName, n)
	}
	return n, nil
}

func parseSkip(_ *runner, spec any, _ pipeCtx) (stage, error) {
	n, err := nonNegativeLong(spec, "$skip")
	if err != nil {
		return nil, mongoerr.New(5107200, "invalid argument to $skip stage: %s", err)
	}
	return func(in []bson.D) ([]bson.D, error) {
		if n >= int64(len(in)) {
			return nil, nil
		}
		return in[n:], nil
	}, nil
}

func parseLimit(_ *runner, spec any, _ pipeCtx) (stage, error) {
	n, err := nonNegativeLong(spec, "$limit")
	if err != nil {
		return nil, mongoerr.New(5107201, "invalid argument to $limit stage: %s", err)
	}
	if n == 0 {
		return nil, mongoerr.New(15958, "the limit must be positive")
	}
	return func(in []bson.D) ([]bson.D, error) {
		if n < int64(len(in)) {
			return in[:n], nil
		}
		return in, nil
	}, nil
}

func parseCount(_ *runner, spec any, _ pipeCtx) (stage, error) {
	name, ok := spec.(string)
	switch {
	case !ok:
		return nil, mongoerr.New(40156, "the count field must be a non-empty string")
	case name == "":
		return nil, mongoerr.New(40157, "the count field must be a non-empty string")
	case name[0] == '$':
		return nil, mongoerr.New(40158, "the count field cannot be a $-prefixed path")
	case strings.ContainsRune(name, 0):
		return nil, mongoerr.New(40159, "the count field cannot contain a null byte")
	case strings.Contains(name, "."):
		return nil, mongoerr.New(40160, "the count field cannot contain '.'")
	}
	return func(in []bson.D) ([]bson.D, error) {
		if len(in) == 0 {
			return nil, nil
		}
		return []bson.D{{{Key: name, Value: countValue(int64(len(in)))}}}, nil
	}, nil
}

// countValue types a count as $sum: 1 would: int while it fits, then long.
func countValue(n int64) any {
	if n <= 1<<31-1 {
		return int32(n)
	}
	return n
}

func parseSample(_ *runner, spec any, _ pipeCtx) (stage, error) {
	d, ok := spec.(bson.D)
	if !ok {
		return nil, mongoerr.New(28745, "the $sample stage specification must be an object")
	}
	size := int64(-1)
	for _, e := range d {
		if e.Key != "size" {
			return nil, mongoerr.New(28748, "unrecognized option to $sample: %s", e.Key)
		}
		if !isNumber(e.Value) {
			return nil, mongoerr.New(28746, "size argument to $sample must be a number")
		}
		f, _ := bsonkit.ToFloat64(e.Value)
		if f < 0 {
			return nil, mongoerr.New(28747, "size argument to $sample must not be negative")
		}
		size = int64(f)
	}
	if size < 0 {
		return nil, mongoerr.New(28749, "$sample stage must specify a size")
	}
	return func(in []bson.D) ([]bson.D, error) {
		perm := rand.Perm(len(in))
		if int64(len(perm)) > size {
			perm = perm[:size]
		}
		out := make([]bson.D, len(perm))
		for i, p := range perm {
			out[i] = in[p]
		}
		return out, nil
	}, nil
}

func parseSortByCount(r *runner, spec any, c pipeCtx) (stage, error) {
	switch x := spec.(type) {
	case string:
		if !strings.HasPrefix(x, "$") {
			return nil, mongoerr.New(40148, "the sortByCount field must be defined as a $-prefixed path or an expression")
		}
	case bson.D:
		if !isExpressionObject(x) || len(x) != 1 {
			return nil, mongoerr.New(40147, "the sortByCount field must be specified as an object expression, e.g. {$add: [...]}")
		}
	default:
		return nil, mongoerr.New(40149, "the sortByCount field must be defined as a $-prefixed path or an expression")
	}
	group, err := parseGroup(r, bson.D{{Key: "_id", Value: spec},
		{Key: "count", Value: bson.D{{Key: "$sum", Value: int32(1)}}}}, c)
	if err != nil {
		return nil, err
	}
	s, err := query.CompileSort(bson.D{{Key: "count", Value: int32(-1)}})
	if err != nil {
		return nil, err
	}
	sorter := sortStage(s)
	return func(in []bson.D) ([]bson.D, error) {
		out, err := group(in)
		if err != nil {
			return nil, err
		}
		return sorter(out)
	}, nil
}

// parseDocuments handles {$documents: <array expression>}, evaluated once without a document.
func parseDocuments(r *runner, spec any, _ pipeCtx) (stage, error) {
	ex, err := expr.Compile(spec)
	if err != nil {
		return nil, err
	}
	return func([]bson.D) ([]bson.D, error) {
		v, err := ex.Eval(bson.D{}, r.opts.Vars)
		if err != nil {
			return nil, err
		}
		arr, ok := v.(bson.A)
		if !ok {
			return nil, mongoerr.New(5858203, "error during lookup: $documents requires an array, found %s", bsonkit.TypeName(v))
		}
		out := make([]bson.D, len(arr))
		for i, el := range arr {
			d, ok := el.(bson.D)
			if !ok {
				return nil, mongoerr.New(40228, "'newRoot' expression must evaluate to an object, but resulting value was: %s. Type of resulting value: '%s'. Input document: {}",
					fmtValue(el), bsonkit.TypeName(el))
			}
			out[i] = d
		}
		return out, nil
	}, nil
}

// SessionLister is implemented by an Env that keeps mongod's logical session cache, for
// $listLocalSessions.
type SessionLister interface {
	// LocalSessions returns the cached sessions as {_id: {id, uid}, lastUse} documents.
	LocalSessions() []bson.D
}

// parseListLocalSessions lists the sessions the Env's session cache holds (none without one).
// Without authentication every session belongs to the same (empty) user, so the allUsers and
// users filters select them all.
func parseListLocalSessions(r *runner, spec any, _ pipeCtx) (stage, error) {
	d, ok := spec.(bson.D)
	if !ok {
		return nil, mongoerr.New(mongoerr.TypeMismatch, "$listLocalSessions must be an object")
	}
	for _, e := range d {
		if e.Key != "allUsers" && e.Key != "users" {
			return nil, mongoerr.New(40415, "BSON field 'ListSessionsSpec.%s' is an unknown field.", e.Key)
		}
	}
	return func([]bson.D) ([]bson.D, error) {
		if l, ok := r.opts.Env.(SessionLister); ok {
			return l.LocalSessions(), nil
		}
		return nil, nil
	}, nil
}
