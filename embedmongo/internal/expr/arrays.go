package expr

import (
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// Array operators.

func init() {
	register("$arrayElemAt", named(2, 2, func(name string, a []any) (any, error) { return elemAt(name, a[0], a[1]) }))
	register("$first", named(1, 1, func(name string, a []any) (any, error) { return elemAt(name, a[0], int32(0)) }))
	register("$last", named(1, 1, func(name string, a []any) (any, error) { return elemAt(name, a[0], int32(-1)) }))
	register("$concatArrays", ranged(0, -1, evalConcatArrays))
	register("$in", fixed(2, evalIn))
	register("$indexOfArray", ranged(2, 4, evalIndexOfArray))
	register("$isArray", fixed(1, func(a []any) (any, error) { _, ok := asArray(a[0]); return ok, nil }))
	register("$reverseArray", fixed(1, evalReverseArray))
	register("$size", fixed(1, evalSize))
	register("$slice", ranged(2, 3, evalSlice))
	register("$range", ranged(2, 3, evalRange))
	register("$map", compileMap)
	register("$filter", compileFilter)
	register("$reduce", compileReduce)
	register("$zip", compileZip)
	register("$sortArray", compileSortArray)
	register("$firstN", compileNArray(func(a bson.A, n int) bson.A { return a[:min(n, len(a))] }))
	register("$lastN", compileNArray(func(a bson.A, n int) bson.A { return a[len(a)-min(n, len(a)):] }))
	register("$maxN", compileNArray(func(a bson.A, n int) bson.A { return topN(a, n, -1) }))
	register("$minN", compileNArray(func(a bson.A, n int) bson.A { return topN(a, n, 1) }))
}

// elemAt implements $arrayElemAt, $first and $last: negative indexes count from the end and
// out-of-range indexes give Missing.
func elemAt(name string, arr, idx any) (any, error) {
	if nullish(arr) || nullish(idx) {
		return nil, nil
	}
	a, ok := asArray(arr)
	if !ok {
		if name == "$arrayElemAt" {
			return nil, mongoerr.New(28689, "$arrayElemAt's first argument must be an array, but is %s", typeName(arr))
		}
		return nil, mongoerr.New(28689, "%s's argument must be an array, but is %s", name, typeName(arr))
	}
	if !bsonkit.IsNumber(idx) {
		return nil, mongoerr.New(28690, "$arrayElemAt's second argument must be a numeric value, but is %s", typeName(idx))
	}
	i, ok := bsonkit.ToInt64Exact(idx)
	if !ok || !fitsInt32(i) {
		return nil, mongoerr.New(28691, "$arrayElemAt's second argument must be representable as a 32-bit integer: %s", fmtNum(idx))
	}
	if i < 0 {
		i += int64(len(a))
	}
	if i < 0 || i >= int64(len(a)) {
		return bsonkit.Missing, nil
	}
	return a[i], nil
}

func evalConcatArrays(args []any) (any, error) {
	out := bson.A{}
	for _, v := range args {
		if nullish(v) {
			return nil, nil
		}
		a, ok := asArray(v)
		if !ok {
			return nil, mongoerr.New(28664, "$concatArrays only supports arrays, not %s", typeName(v))
		}
		out = append(out, a...)
	}
	return out, nil
}

func evalIn(args []any) (any, error) {
	a, ok := asArray(args[1])
	if !ok {
		return nil, mongoerr.New(40081, "$in requires an array as a second argument, found: %s", typeName(args[1]))
	}
	for _, e := range a {
		if bsonkit.Equal(args[0], e) {
			return true, nil
		}
	}
	return false, nil
}

// intArg validates an optional non-negative integral index argument (as $indexOfArray and
// $indexOfBytes/$indexOfCP require).
func intArg(op, what string, v any, typeCode, negCode int32) (int64, error) {
	i, ok := bsonkit.ToInt64Exact(v)
	if !ok || !fitsInt32(i) {
		return 0, mongoerr.New(typeCode, "%s requires an integral %s, found a value of type: %s, with value: %s", op, what, typeName(v), formatValue(v))
	}
	if i < 0 {
		return 0, mongoerr.New(negCode, "%s requires a nonnegative %s, found: %d", op, what, i)
	}
	return i, nil
}

func evalIndexOfArray(args []any) (any, error) {
	if nullish(args[0]) {
		return nil, nil
	}
	a, ok := asArray(args[0])
	if !ok {
		return nil, mongoerr.New(40090, "$indexOfArray requires an array as a first argument, found: %s", typeName(args[0]))
	}
	start, end := int64(0), int64(len(a))
	if len(args) > 2 {
		s, err := intArg("$indexOfArray", "starting index", args[2], 40096, 40097)
		if err != nil {
			return nil, err
		}
		start = s
	}
	if len(args) > 3 {
		e, err := intArg("$indexOfArray", "ending index", args[3], 40096, 40097)
		if err != nil {
			return nil, err
		}
		end = min(e, end)
	}
	for i := start; i < end; i++ {
		if bsonkit.Equal(a[i], args[1]) {
			return int32(i), nil
		}
	}
	return int32(-1), nil
}

func evalReverseArray(args []any) (any, error) {
	if nullish(args[0]) {
		return nil, nil
	}
	a, ok := asArray(args[0])
	if !ok {
		return nil, mongoerr.New(34435, "The argument to $reverseArray must be an array, but was of type: %s", typeName(args[0]))
	}
	out := slices.Clone(a)
	slices.Reverse(out)
	if out == nil {
		out = bson.A{}
	}
	return out, nil
}

func evalSize(args []any) (any, error) {
	a, ok := asArray(args[0])
	if !ok {
		return nil, mongoerr.New(17124, "The argument to $size must be an array, but was of type: %s", typeName(args[0]))
	}
	return int32(len(a)), nil
}

func evalSlice(args []any) (any, error) {
	for _, v := range args {
		if nullish(v) {
			return nil, nil
		}
	}
	a, ok := asArray(args[0])
	if !ok {
		return nil, mongoerr.New(28724, "First argument to $slice must be an array, but is of type: %s", typeName(args[0]))
	}
	if !bsonkit.IsNumber(args[1]) {
		return nil, mongoerr.New(28725, "Second argument to $slice must be a numeric value, but was of type: %s", typeName(args[1]))
	}
	second, ok := bsonkit.ToInt64Exact(args[1])
	if !ok || !fitsInt32(second) {
		return nil, mongoerr.New(28726, "Second argument to $slice can't be represented as a 32-bit integer: %s", fmtNum(args[1]))
	}
	n := int64(len(a))
	var start, count int64
	if len(args) == 2 {
		if second >= 0 {
			start, count = 0, second
		} else {
			start, count = max(n+second, 0), -second
		}
	} else {
		if !bsonkit.IsNumber(args[2]) {
			return nil, mongoerr.New(28727, "Third argument to $slice must be numeric, but was of type: %s", typeName(args[2]))
		}
		third, ok := bsonkit.ToInt64Exact(args[2])
		if !ok || !fitsInt32(third) {
			return nil, mongoerr.New(28728, "Third argument to $slice can't be represented as a 32-bit integer: %s", fmtNum(args[2]))
		}
		if third <= 0 {
			return nil, mongoerr.New(28729, "Third argument to $slice must be positive: %s", fmtNum(args[2]))
		}
		start, count = second, third
		if start < 0 {
			start = max(n+start, 0)
		}
	}
	if start >= n {
		return bson.A{}, nil
	}
	end := min(start+count, n)
	return slices.Clone(a[start:end]), nil
}

func evalRange(args []any) (any, error) {
	type spec struct {
		what             string
		numCode, intCode int32
	}
	specs := []spec{{"a numeric starting value", 34443, 34444}, {"a numeric ending value", 34445, 34446}, {"a numeric step value", 34447, 34448}}
	vals := []int64{0, 0, 1}
	for i, v := range args {
		if !bsonkit.IsNumber(v) {
			return nil, mongoerr.New(specs[i].numCode, "$range requires %s, found value of type: %s", specs[i].what, typeName(v))
		}
		x, ok := bsonkit.ToInt64Exact(v)
		if !ok || !fitsInt32(x) {
			return nil, mongoerr.New(specs[i].intCode, "$range requires %s that can be represented as a 32-bit integer, found value: %s", specs[i].what, fmtNum(v))
		}
		vals[i] = x
	}
	start, end, step := vals[0], vals[1], vals[2]
	if step == 0 {
		return nil, mongoerr.New(34449, "$range requires a non-zero step value")
	}
	out := bson.A{}
	for i := start; (step > 0 && i < end) || (step < 0 && i > end); i += step {
		out = append(out, int32(i))
	}
	return out, nil
}

// iterParams parses the named parameters of $map/$filter, with "as" defaulting to "this".
func iterParams(op string, arg any, codes map[string]int32, allowed ...string) (map[string]any, string, error) {
	d, ok := asDoc(arg)
	if !ok {
		return nil, "", mongoerr.New(codes["object"], "%s only supports an object as its argument", op)
	}
	params := map[string]any{}
	for _, e := range d {
		if !slices.Contains(allowed, e.Key) {
			return nil, "", mongoerr.New(codes["unknown"], "Unrecognized parameter to %s: %s", op, e.Key)
		}
		params[e.Key] = e.Value
	}
	as := "this"
	if v, ok := params["as"]; ok {
		s, ok := v.(string)
		if !ok {
			return nil, "", mongoerr.New(mongoerr.FailedToParse, "%s 'as' must be a string, found: %s", op, typeName(v))
		}
		if err := validateVarWrite(s); err != nil {
			return nil, "", err
		}
		as = s
	}
	return params, as, nil
}

func compileMap(name string, arg any) (node, error) {
	params, as, err := iterParams(name, arg, map[string]int32{"object": 16878, "unknown": 16879}, "input", "as", "in")
	if err != nil {
		return node{}, err
	}
	if _, ok := params["input"]; !ok {
		return node{}, mongoerr.New(16880, "Missing 'input' parameter to $map")
	}
	if _, ok := params["in"]; !ok {
		return node{}, mongoerr.New(16882, "Missing 'in' parameter to $map")
	}
	input, err := compile(params["input"])
	if err != nil {
		return node{}, err
	}
	in, err := compile(params["in"])
	if err != nil {
		return node{}, err
	}
	return dynamic(func(c *ctx) (any, error) {
		v, err := input.eval(c)
		if err != nil || nullish(v) {
			return nil, err
		}
		a, ok := asArray(v)
		if !ok {
			return nil, mongoerr.New(16883, "input to $map must be an array not %s", typeName(v))
		}
		out := make(bson.A, len(a))
		for i, e := range a {
			r, err := in.eval(c.with(as, e))
			if err != nil {
				return nil, err
			}
			if bsonkit.IsMissing(r) {
				r = nil
			}
			out[i] = r
		}
		return out, nil
	}), nil
}

func compileFilter(name string, arg any) (node, error) {
	params, as, err := iterParams(name, arg, map[string]int32{"object": 28646, "unknown": 28647}, "input", "as", "cond", "limit")
	if err != nil {
		return node{}, err
	}
	if _, ok := params["input"]; !ok {
		return node{}, mongoerr.New(28648, "Missing 'input' parameter to $filter")
	}
	if _, ok := params["cond"]; !ok {
		return node{}, mongoerr.New(28650, "Missing 'cond' parameter to $filter")
	}
	input, err := compile(params["input"])
	if err != nil {
		return node{}, err
	}
	cond, err := compile(params["cond"])
	if err != nil {
		return node{}, err
	}
	limit := constant(nil)
	if l, ok := params["limit"]; ok {
		if limit, err = compile(l); err != nil {
			return node{}, err
		}
	}
	return dynamic(func(c *ctx) (any, error) {
		v, err := input.eval(c)
		if err != nil || nullish(v) {
			return nil, err
		}
		a, ok := asArray(v)
		if !ok {
			return nil, mongoerr.New(28651, "input to $filter must be an array not %s", typeName(v))
		}
		lv, err := limit.eval(c)
		if err != nil {
			return nil, err
		}
		limitN := int64(len(a))
		if !nullish(lv) {
			l, ok := bsonkit.ToInt64Exact(lv)
			if !ok || !fitsInt32(l) {
				return nil, mongoerr.New(327391, "$filter: limit must be represented as a 32-bit integral value: %s", formatValue(lv))
			}
			if l < 1 {
				return nil, mongoerr.New(327392, "$filter: limit must be greater than 0: %d", l)
			}
			limitN = l
		}
		out := bson.A{}
		for _, e := range a {
			if int64(len(out)) >= limitN {
				break
			}
			r, err := cond.eval(c.with(as, e))
			if err != nil {
				return nil, err
			}
			if Truthy(r) {
				out = append(out, e)
			}
		}
		return out, nil
	}), nil
}

func compileReduce(name string, arg any) (node, error) {
	d, ok := asDoc(arg)
	if !ok {
		return node{}, mongoerr.New(40075, "$reduce requires an object as an argument, found: %s", typeName(arg))
	}
	var input, init, in *node
	for _, e := range d {
		n, err := compile(e.Value)
		if err != nil {
			return node{}, err
		}
		switch e.Key {
		case "input":
			input = &n
		case "initialValue":
			init = &n
		case "in":
			in = &n
		default:
			return node{}, mongoerr.New(40076, "$reduce found an unknown argument: %s", e.Key)
		}
	}
	switch {
	case input == nil:
		return node{}, mongoerr.New(40077, "$reduce requires 'input' to be specified")
	case init == nil:
		return node{}, mongoerr.New(40078, "$reduce requires 'initialValue' to be specified")
	case in == nil:
		return node{}, mongoerr.New(40079, "$reduce requires 'in' to be specified")
	}
	return dynamic(func(c *ctx) (any, error) {
		v, err := input.eval(c)
		if err != nil || nullish(v) {
			return nil, err
		}
		a, ok := asArray(v)
		if !ok {
			return nil, mongoerr.New(40080, "$reduce requires that 'input' be an array, found: %s", formatValue(v))
		}
		acc, err := init.eval(c)
		if err != nil {
			return nil, err
		}
		for _, e := range a {
			if acc, err = in.eval(c.with("value", acc).with("this", e)); err != nil {
				return nil, err
			}
		}
		return acc, nil
	}), nil
}

func compileZip(name string, arg any) (node, error) {
	d, ok := asDoc(arg)
	if !ok {
		return node{}, mongoerr.New(34460, "$zip only supports an object as an argument, found %s", typeName(arg))
	}
	var inputs, defaults []node
	var haveInputs, haveDefaults, longest bool
	for _, e := range d {
		switch e.Key {
		case "inputs", "defaults":
			a, ok := asArray(e.Value)
			if !ok {
				return node{}, mongoerr.New(34461, "%s must be an array of expressions, found %s", e.Key, typeName(e.Value))
			}
			ns, err := compileAll(a)
			if err != nil {
				return node{}, err
			}
			if e.Key == "inputs" {
				inputs, haveInputs = ns, true
			} else {
				defaults, haveDefaults = ns, true
			}
		case "useLongestLength":
			b, ok := e.Value.(bool)
			if !ok {
				return node{}, mongoerr.New(34463, "useLongestLength must be a bool, found %s", typeName(e.Value))
			}
			longest = b
		default:
			return node{}, mongoerr.New(34464, "$zip found an unknown argument: %s", e.Key)
		}
	}
	if !haveInputs || len(inputs) == 0 {
		return node{}, mongoerr.New(34465, "$zip requires at least one input array")
	}
	if haveDefaults && !longest {
		return node{}, mongoerr.New(34466, "cannot specify defaults unless useLongestLength is true")
	}
	if haveDefaults && len(defaults) != len(inputs) {
		return node{}, mongoerr.New(34467, "defaults and inputs must have the same length")
	}
	return dynamic(func(c *ctx) (any, error) {
		arrays := make([]bson.A, len(inputs))
		minLen, maxLen := -1, 0
		for i, in := range inputs {
			v, err := in.eval(c)
			if err != nil {
				return nil, err
			}
			if nullish(v) {
				return nil, nil
			}
			a, ok := asArray(v)
			if !ok {
				return nil, mongoerr.New(34468, "$zip found a non-array expression in input: %s", formatValue(v))
			}
			arrays[i] = a
			if minLen < 0 || len(a) < minLen {
				minLen = len(a)
			}
			maxLen = max(maxLen, len(a))
		}
		pads := make([]any, len(inputs))
		for i, dn := range defaults {
			v, err := dn.eval(c)
			if err != nil {
				return nil, err
			}
			pads[i] = v
		}
		n := minLen
		if longest {
			n = maxLen
		}
		out := make(bson.A, n)
		for row := range n {
			tuple := make(bson.A, len(arrays))
			for i, a := range arrays {
				if row < len(a) {
					tuple[i] = a[row]
				} else {
					tuple[i] = pads[i]
				}
			}
			out[row] = tuple
		}
		return out, nil
	}), nil
}

func compileSortArray(name string, arg any) (node, error) {
	d, ok := asDoc(arg)
	if !ok {
		return node{}, mongoerr.New(2942500, "$sortArray requires an object as an argument, found: %s", typeName(arg))
	}
	var input *node
	var sortBy any
	for _, e := range d {
		switch e.Key {
		case "input":
			n, err := compile(e.Value)
			if err != nil {
				return node{}, err
			}
			input = &n
		case "sortBy":
			sortBy = e.Value
		default:
			return node{}, mongoerr.New(2942501, "$sortArray found an unknown argument: %s", e.Key)
		}
	}
	if input == nil {
		return node{}, mongoerr.New(2942502, "$sortArray requires 'input' to be specified")
	}
	if sortBy == nil {
		return node{}, mongoerr.New(2942503, "$sortArray requires 'sortBy' to be specified")
	}
	less, err := sortComparator(sortBy)
	if err != nil {
		return node{}, err
	}
	return dynamic(func(c *ctx) (any, error) {
		v, err := input.eval(c)
		if err != nil || nullish(v) {
			return nil, err
		}
		a, ok := asArray(v)
		if !ok {
			return nil, mongoerr.New(2942504, "The input argument to $sortArray must be an array, but was of type: %s", typeName(v))
		}
		out := slices.Clone(a)
		if out == nil {
			out = bson.A{}
		}
		slices.SortStableFunc(out, less)
		return out, nil
	}), nil
}

// sortComparator builds the comparison for a sortBy of 1/-1 (whole values) or a sort document.
func sortComparator(sortBy any) (func(x, y any) int, error) {
	if bsonkit.IsNumber(sortBy) {
		dir, ok := sortDir(sortBy)
		if !ok {
			return nil, mongoerr.New(mongoerr.BadValue, "$sortArray sortBy must be either 1 or -1")
		}
		return func(x, y any) int { return dir * bsonkit.Compare(x, y) }, nil
	}
	spec, ok := asDoc(sortBy)
	if !ok || len(spec) == 0 {
		return nil, mongoerr.New(mongoerr.BadValue, "$sortArray sortBy must be a non-empty object or 1/-1")
	}
	type key struct {
		path string
		dir  int
	}
	keys := make([]key, len(spec))
	for i, e := range spec {
		dir, ok := sortDir(e.Value)
		if !ok {
			return nil, mongoerr.New(15975, "$sort key ordering must be 1 (for ascending) or -1 (for descending)")
		}
		keys[i] = key{e.Key, dir}
	}
	return func(x, y any) int {
		for _, k := range keys {
			if c := bsonkit.Compare(sortKey(x, k.path, k.dir), sortKey(y, k.path, k.dir)); c != 0 {
				return k.dir * c
			}
		}
		return 0
	}, nil
}

func sortDir(v any) (int, bool) {
	i, ok := bsonkit.ToInt64Exact(v)
	if !ok || (i != 1 && i != -1) {
		return 0, false
	}
	return int(i), true
}

// sortKey extracts the value sorted on: a missing path sorts as null, and an array sorts by
// its smallest element ascending or its largest descending, as $sort does.
func sortKey(v any, path string, dir int) any {
	d, ok := asDoc(v)
	if !ok {
		return bsonkit.Missing
	}
	r := bsonkit.GetPath(d, path)
	if bsonkit.IsMissing(r) {
		return nil
	}
	if a, ok := asArray(r); ok {
		if len(a) == 0 {
			return bsonkit.Missing
		}
		best := a[0]
		for _, e := range a[1:] {
			if c := bsonkit.Compare(e, best); (dir > 0 && c < 0) || (dir < 0 && c > 0) {
				best = e
			}
		}
		return best
	}
	return r
}

// compileNArray handles $firstN/$lastN/$maxN/$minN in expression form: {n, input}.
func compileNArray(pick func(a bson.A, n int) bson.A) opCompiler {
	return func(name string, arg any) (node, error) {
		d, ok := asDoc(arg)
		if !ok {
			return node{}, mongoerr.New(5787801, "specification must be an object; found %s", typeName(arg))
		}
		var nNode, inNode *node
		for _, e := range d {
			n, err := compile(e.Value)
			if err != nil {
				return node{}, err
			}
			switch e.Key {
			case "n":
				nNode = &n
			case "input":
				inNode = &n
			default:
				return node{}, mongoerr.New(5787901, "Unknown argument for 'n' operator: %s", e.Key)
			}
		}
		if nNode == nil {
			return node{}, mongoerr.New(5787906, "Missing value for 'n'")
		}
		if inNode == nil {
			return node{}, mongoerr.New(5787907, "Missing value for 'input'")
		}
		return dynamic(func(c *ctx) (any, error) {
			nv, err := nNode.eval(c)
			if err != nil {
				return nil, err
			}
			n, ok := bsonkit.ToInt64Exact(nv)
			if !ok {
				return nil, mongoerr.New(5787903, "Value for 'n' must be of integral type, but found %s", formatValue(nv))
			}
			if n <= 0 {
				return nil, mongoerr.New(5787908, "'n' must be greater than 0, found %d", n)
			}
			v, err := inNode.eval(c)
			if err != nil {
				return nil, err
			}
			a, ok := asArray(v)
			if !ok {
				return nil, mongoerr.New(5788200, "Input must be an array, but found %s", typeName(v))
			}
			out := slices.Clone(pick(a, int(min(n, int64(len(a))))))
			if out == nil {
				out = bson.A{}
			}
			return out, nil
		}), nil
	}
}

// topN returns the n largest (dir -1) or smallest (dir 1) non-null elements, best first.
func topN(a bson.A, n int, dir int) bson.A {
	vals := make(bson.A, 0, len(a))
	for _, e := range a {
		if !nullish(e) {
			vals = append(vals, e)
		}
	}
	slices.SortStableFunc(vals, func(x, y any) int { return dir * bsonkit.Compare(x, y) })
	return vals[:min(n, len(vals))]
}
