package expr

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// String operators. Lengths and indexes are bytes for the *Bytes variants and code points for
// the *CP variants; results are int32 as in mongod.

func init() {
	register("$concat", ranged(0, -1, evalConcat))
	register("$substr", named(3, 3, evalSubstrBytes))
	register("$substrBytes", named(3, 3, evalSubstrBytes))
	register("$substrCP", fixed(3, evalSubstrCP))
	register("$toLower", named(1, 1, func(n string, a []any) (any, error) { return mapString(n, a[0], asciiLower) }))
	register("$toUpper", named(1, 1, func(n string, a []any) (any, error) { return mapString(n, a[0], asciiUpper) }))
	register("$strLenBytes", fixed(1, func(a []any) (any, error) {
		s, ok := a[0].(string)
		if !ok {
			return nil, mongoerr.New(34473, "$strLenBytes requires a string argument, found: %s", typeName(a[0]))
		}
		return int32(len(s)), nil
	}))
	register("$strLenCP", fixed(1, func(a []any) (any, error) {
		s, ok := a[0].(string)
		if !ok {
			return nil, mongoerr.New(34471, "$strLenCP requires a string argument, found: %s", typeName(a[0]))
		}
		return int32(utf8.RuneCountInString(s)), nil
	}))
	register("$split", fixed(2, evalSplit))
	register("$strcasecmp", named(2, 2, evalStrcasecmp))
	register("$indexOfBytes", named(2, 4, evalIndexOf))
	register("$indexOfCP", named(2, 4, evalIndexOf))
	register("$trim", compileTrim)
	register("$ltrim", compileTrim)
	register("$rtrim", compileTrim)
	register("$replaceOne", compileReplace)
	register("$replaceAll", compileReplace)
	register("$regexMatch", compileRegex)
	register("$regexFind", compileRegex)
	register("$regexFindAll", compileRegex)
}

func evalConcat(args []any) (any, error) {
	var b strings.Builder
	for _, v := range args {
		if nullish(v) {
			return nil, nil
		}
		s, ok := v.(string)
		if !ok {
			return nil, mongoerr.New(16702, "$concat only supports strings, not %s", typeName(v))
		}
		b.WriteString(s)
	}
	return b.String(), nil
}

// coerceToString is mongod's Value::coerceToString, used by $substr, $toLower, $strcasecmp...
// null and missing become "".
func coerceToString(op string, v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case bson.Symbol:
		return string(x), nil
	case bson.JavaScript:
		return string(x), nil
	case nil, bson.Null, bson.Undefined, bsonkit.MissingType:
		return "", nil
	case int32, int64, int:
		return fmtNum(x), nil
	case float64:
		return formatDouble(x), nil
	case bson.Decimal128:
		return x.String(), nil
	case bson.DateTime:
		return formatISODate(x), nil
	case bson.Timestamp:
		return "Timestamp(" + strconv.FormatUint(uint64(x.T), 10) + ", " + strconv.FormatUint(uint64(x.I), 10) + ")", nil
	}
	return "", mongoerr.New(16007, "can't convert from BSON type %s to String", typeName(v))
}

func mapString(op string, v any, f func(string) string) (any, error) {
	s, err := coerceToString(op, v)
	if err != nil {
		return nil, err
	}
	return f(s), nil
}

// mongod's $toLower/$toUpper change ASCII letters only.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 32
		}
	}
	return string(b)
}

func asciiUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 32
		}
	}
	return string(b)
}

func evalSubstrBytes(name string, args []any) (any, error) {
	s, err := coerceToString(name, args[0])
	if err != nil {
		return nil, err
	}
	if !bsonkit.IsNumber(args[1]) {
		return nil, mongoerr.New(16034, "%s: starting index must be a numeric type (is BSON type %s)", name, typeName(args[1]))
	}
	if !bsonkit.IsNumber(args[2]) {
		return nil, mongoerr.New(16035, "%s: length must be a numeric type (is BSON type %s)", name, typeName(args[2]))
	}
	startF, _ := toFloat(args[1])
	if startF < 0 {
		return nil, mongoerr.New(50752, "%s: starting index must be non-negative (got: %s)", name, fmtNum(args[1]))
	}
	start := int64(startF)
	if start >= int64(len(s)) {
		return "", nil
	}
	lengthF, _ := toFloat(args[2])
	end := int64(len(s))
	if lengthF >= 0 && start+int64(lengthF) < end {
		end = start + int64(lengthF)
	}
	if !utf8.RuneStart(s[start]) {
		return nil, mongoerr.New(28656, "%s:  Invalid range, starting index is a UTF-8 continuation byte.", name)
	}
	if end < int64(len(s)) && !utf8.RuneStart(s[end]) {
		return nil, mongoerr.New(28657, "%s:  Invalid range, ending index is in the middle of a UTF-8 character.", name)
	}
	return s[start:end], nil
}

func evalSubstrCP(args []any) (any, error) {
	s, err := coerceToString("$substrCP", args[0])
	if err != nil {
		return nil, err
	}
	if !bsonkit.IsNumber(args[1]) {
		return nil, mongoerr.New(34450, "$substrCP: starting index must be a numeric type (is BSON type %s)", typeName(args[1]))
	}
	if !bsonkit.IsNumber(args[2]) {
		return nil, mongoerr.New(34452, "$substrCP: length must be a numeric type (is BSON type %s)", typeName(args[2]))
	}
	start, ok := bsonkit.ToInt64Exact(args[1])
	if !ok || !fitsInt32(start) {
		return nil, mongoerr.New(34451, "$substrCP: starting index cannot be represented as a 32-bit integral value: %s", fmtNum(args[1]))
	}
	length, ok := bsonkit.ToInt64Exact(args[2])
	if !ok || !fitsInt32(length) {
		return nil, mongoerr.New(34453, "$substrCP: length cannot be represented as a 32-bit integral value: %s", fmtNum(args[2]))
	}
	if length < 0 {
		return nil, mongoerr.New(34454, "$substrCP: length must be a nonnegative integer.")
	}
	if start < 0 {
		return nil, mongoerr.New(34455, "$substrCP: the starting index must be nonnegative integer.")
	}
	runes := []rune(s)
	if start >= int64(len(runes)) {
		return "", nil
	}
	end := min(start+length, int64(len(runes)))
	return string(runes[start:end]), nil
}

func evalSplit(args []any) (any, error) {
	if nullish(args[0]) {
		return nil, nil
	}
	s, ok := args[0].(string)
	if !ok {
		return nil, mongoerr.New(40085, "$split requires an expression that evaluates to a string as a first argument, found: %s", typeName(args[0]))
	}
	if nullish(args[1]) {
		return nil, nil
	}
	sep, ok := args[1].(string)
	if !ok {
		return nil, mongoerr.New(40086, "$split requires an expression that evaluates to a string as a second argument, found: %s", typeName(args[1]))
	}
	if sep == "" {
		return nil, mongoerr.New(40087, "$split requires a non-empty separator")
	}
	parts := strings.Split(s, sep)
	out := make(bson.A, len(parts))
	for i, p := range parts {
		out[i] = p
	}
	return out, nil
}

func evalStrcasecmp(name string, args []any) (any, error) {
	a, err := coerceToString(name, args[0])
	if err != nil {
		return nil, err
	}
	b, err := coerceToString(name, args[1])
	if err != nil {
		return nil, err
	}
	return int32(strings.Compare(asciiUpper(a), asciiUpper(b))), nil
}

func evalIndexOf(name string, args []any) (any, error) {
	cp := name == "$indexOfCP"
	firstCode, secondCode := int32(40091), int32(40092)
	if cp {
		firstCode, secondCode = 40093, 40094
	}
	if nullish(args[0]) {
		return nil, nil
	}
	s, ok := args[0].(string)
	if !ok {
		return nil, mongoerr.New(firstCode, "%s requires a string as the first argument, found: %s", name, typeName(args[0]))
	}
	sub, ok := args[1].(string)
	if !ok {
		return nil, mongoerr.New(secondCode, "%s requires a string as the second argument, found: %s", name, typeName(args[1]))
	}
	var units []string // code points, for $indexOfCP
	n := int64(len(s))
	if cp {
		units = strings.Split(s, "")
		n = int64(len(units))
	}
	start, end := int64(0), n
	if len(args) > 2 {
		v, err := intArg(name, "starting index", args[2], 40096, 40097)
		if err != nil {
			return nil, err
		}
		start = v
	}
	if len(args) > 3 {
		v, err := intArg(name, "ending index", args[3], 40096, 40097)
		if err != nil {
			return nil, err
		}
		end = min(v, n)
	}
	if start > end || start > n {
		return int32(-1), nil
	}
	if !cp {
		i := strings.Index(s[start:end], sub)
		if i < 0 {
			return int32(-1), nil
		}
		return int32(start + int64(i)), nil
	}
	subLen := int64(utf8.RuneCountInString(sub))
	for i := start; i+subLen <= end; i++ {
		if strings.Join(units[i:i+subLen], "") == sub {
			return int32(i), nil
		}
	}
	return int32(-1), nil
}

// trimDefault is mongod's default $trim set: whitespace and the null character.
const trimDefault = "\x00 \t\n\v\f\r\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"

func compileTrim(name string, arg any) (node, error) {
	d, ok := asDoc(arg)
	if !ok {
		return node{}, mongoerr.New(50696, "%s only supports an object as an argument, found: %s", name, typeName(arg))
	}
	var input, chars *node
	for _, e := range d {
		n, err := compile(e.Value)
		if err != nil {
			return node{}, err
		}
		switch e.Key {
		case "input":
			input = &n
		case "chars":
			chars = &n
		default:
			return node{}, mongoerr.New(50694, "%s found an unknown argument: %s", name, e.Key)
		}
	}
	if input == nil {
		return node{}, mongoerr.New(50695, "%s requires an 'input' field", name)
	}
	return dynamic(func(c *ctx) (any, error) {
		v, err := input.eval(c)
		if err != nil || nullish(v) {
			return nil, err
		}
		s, ok := v.(string)
		if !ok {
			return nil, mongoerr.New(50699, "%s requires its input to be a string, got %s (of type %s) instead.", name, formatValue(v), typeName(v))
		}
		cut := trimDefault
		if chars != nil {
			cv, err := chars.eval(c)
			if err != nil {
				return nil, err
			}
			if nullish(cv) {
				return nil, nil
			}
			cs, ok := cv.(string)
			if !ok {
				return nil, mongoerr.New(50700, "%s requires 'chars' to be a string, got %s (of type %s) instead.", name, formatValue(cv), typeName(cv))
			}
			cut = cs
		}
		switch name {
		case "$ltrim":
			return strings.TrimLeft(s, cut), nil
		case "$rtrim":
			return strings.TrimRight(s, cut), nil
		}
		return strings.Trim(s, cut), nil
	}), nil
}

func compileReplace(name string, arg any) (node, error) {
	params, err := argObject(name, arg, []string{"input", "find", "replacement"})
	if err != nil {
		return node{}, err
	}
	for i, p := range []string{"input", "find", "replacement"} {
		if _, ok := params[p]; !ok {
			return node{}, mongoerr.New(int32(51749-i), "%s requires '%s' to be specified", name, p)
		}
	}
	ordered := []node{params["input"], params["find"], params["replacement"]}
	return eager(ordered, func(a []any) (any, error) {
		var strs [3]string
		null := false
		for i, p := range []string{"input", "find", "replacement"} {
			if nullish(a[i]) {
				null = true
				continue
			}
			s, ok := a[i].(string)
			if !ok {
				return nil, mongoerr.New(int32(51746-i), "%s requires that '%s' be a string, found: %s", name, p, formatValue(a[i]))
			}
			strs[i] = s
		}
		if null {
			return nil, nil
		}
		if name == "$replaceOne" {
			return strings.Replace(strs[0], strs[1], strs[2], 1), nil
		}
		return strings.ReplaceAll(strs[0], strs[1], strs[2]), nil
	}), nil
}

// compileRegex implements $regexMatch, $regexFind and $regexFindAll with Go's RE2 engine
// (PCRE-only constructs such as lookarounds are rejected with 51111).
func compileRegex(name string, arg any) (node, error) {
	params, err := argObject(name, arg, []string{"input", "regex", "options"})
	if err != nil {
		return node{}, err
	}
	if _, ok := params["input"]; !ok {
		return node{}, mongoerr.New(31022, "%s requires 'input' parameter", name)
	}
	if _, ok := params["regex"]; !ok {
		return node{}, mongoerr.New(31023, "%s requires 'regex' parameter", name)
	}
	opts, hasOpts := params["options"]
	if !hasOpts {
		opts = constant(nil)
	}
	return eager([]node{params["input"], params["regex"], opts}, func(a []any) (any, error) {
		re, err := buildRegex(name, a[1], a[2])
		if err != nil {
			return nil, err
		}
		var s string
		if !nullish(a[0]) {
			var ok bool
			if s, ok = a[0].(string); !ok {
				return nil, mongoerr.New(51104, "%s needs 'input' to be of type string", name)
			}
		}
		if re == nil || nullish(a[0]) {
			switch name {
			case "$regexMatch":
				return false, nil
			case "$regexFindAll":
				return bson.A{}, nil
			}
			return nil, nil
		}
		switch name {
		case "$regexMatch":
			return re.MatchString(s), nil
		case "$regexFind":
			m := re.FindStringSubmatchIndex(s)
			if m == nil {
				return nil, nil
			}
			return regexResult(s, m), nil
		}
		out := bson.A{}
		for _, m := range re.FindAllStringSubmatchIndex(s, -1) {
			out = append(out, regexResult(s, m))
		}
		return out, nil
	}), nil
}

// regexResult builds {match, idx, captures}; idx counts code points, as mongod reports.
func regexResult(s string, m []int) bson.D {
	caps := bson.A{}
	for i := 2; i < len(m); i += 2 {
		if m[i] < 0 {
			caps = append(caps, nil)
		} else {
			caps = append(caps, s[m[i]:m[i+1]])
		}
	}
	return bson.D{
		{Key: "match", Value: s[m[0]:m[1]]},
		{Key: "idx", Value: int32(utf8.RuneCountInString(s[:m[0]]))},
		{Key: "captures", Value: caps},
	}
}

// buildRegex compiles a regex given as a string or bson.Regex plus options; nil means the
// regex is null (no match).
func buildRegex(name string, rv, ov any) (*regexp.Regexp, error) {
	var pattern, flags string
	switch r := rv.(type) {
	case string:
		pattern = r
	case bson.Regex:
		pattern, flags = r.Pattern, r.Options
		if s, ok := ov.(string); ok && s != "" && flags != "" {
			return nil, mongoerr.New(51107, "%s found regex option(s) specified in both 'regex' and 'option' fields", name)
		}
	case nil, bson.Null, bson.Undefined, bsonkit.MissingType:
		return nil, nil
	default:
		return nil, mongoerr.New(51105, "%s needs 'regex' to be of type string or regex", name)
	}
	if !nullish(ov) {
		s, ok := ov.(string)
		if !ok {
			return nil, mongoerr.New(51106, "%s needs 'options' to be of type string", name)
		}
		flags += s
	}
	return compileGoRegex(name, pattern, flags)
}

func compileGoRegex(name, pattern, flags string) (*regexp.Regexp, error) {
	var goFlags string
	for _, f := range flags {
		switch f {
		case 'i', 'm', 's':
			if !strings.ContainsRune(goFlags, f) {
				goFlags += string(f)
			}
		case 'x':
			pattern = stripExtended(pattern)
		case 'u':
		default:
			return nil, mongoerr.New(51108, "%s invalid flag in regex options: %c", name, f)
		}
	}
	if goFlags != "" {
		pattern = "(?" + goFlags + ")" + pattern
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, mongoerr.New(51111, "Invalid Regex in %s: %v", name, err)
	}
	return re, nil
}

// stripExtended removes unescaped whitespace and #-comments, as PCRE's extended mode does.
func stripExtended(p string) string {
	var b strings.Builder
	inClass, comment := false, false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case comment:
			if c == '\n' {
				comment = false
			}
		case c == '\\' && i+1 < len(p):
			b.WriteByte(c)
			i++
			b.WriteByte(p[i])
		case inClass:
			if c == ']' {
				inClass = false
			}
			b.WriteByte(c)
		case c == '[':
			inClass = true
			b.WriteByte(c)
		case c == '#':
			comment = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
