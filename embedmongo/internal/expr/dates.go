package expr

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // Olson time zones must resolve even on hosts without tzdata.

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// Date operators. Dates are bson.DateTime (ms since the epoch, UTC); an optional timezone
// (Olson name or ±hh[:mm] offset) selects the wall clock the parts are read in.

func init() {
	parts := map[string]func(t time.Time) any{
		"$year":        func(t time.Time) any { return int32(t.Year()) },
		"$month":       func(t time.Time) any { return int32(t.Month()) },
		"$dayOfMonth":  func(t time.Time) any { return int32(t.Day()) },
		"$hour":        func(t time.Time) any { return int32(t.Hour()) },
		"$minute":      func(t time.Time) any { return int32(t.Minute()) },
		"$second":      func(t time.Time) any { return int32(t.Second()) },
		"$millisecond": func(t time.Time) any { return int32(t.Nanosecond() / 1e6) },
		"$dayOfWeek":   func(t time.Time) any { return int32(t.Weekday()) + 1 },
		"$dayOfYear":   func(t time.Time) any { return int32(t.YearDay()) },
		"$week":        func(t time.Time) any { return int32(sundayWeek(t)) },
		"$isoWeek":     func(t time.Time) any { _, w := t.ISOWeek(); return int32(w) },
		"$isoWeekYear": func(t time.Time) any { y, _ := t.ISOWeek(); return int64(y) },
		"$isoDayOfWeek": func(t time.Time) any {
			return int32((int(t.Weekday())+6)%7 + 1)
		},
	}
	for op, f := range parts {
		register(op, compileDatePart(f))
	}
	register("$dateToString", compileDateToString)
	register("$dateFromString", compileDateFromString)
	register("$dateAdd", compileDateAdd)
	register("$dateSubtract", compileDateAdd)
	register("$dateDiff", compileDateDiff)
}

// sundayWeek is strftime's %U: weeks start on Sunday; days before the first Sunday are week 0.
func sundayWeek(t time.Time) int { return (t.YearDay() - 1 + 7 - int(t.Weekday())) / 7 }

// coerceToDate accepts dates, timestamps and ObjectIds, as mongod's date operators do.
func coerceToDate(op string, v any) (time.Time, error) {
	switch x := v.(type) {
	case bson.DateTime:
		return x.Time().UTC(), nil
	case bson.Timestamp:
		return time.Unix(int64(x.T), 0).UTC(), nil
	case bson.ObjectID:
		return x.Timestamp().UTC(), nil
	}
	return time.Time{}, mongoerr.New(16006, "can't convert from BSON type %s to Date", typeName(v))
}

// parseTimezone resolves a timezone argument; nil location with nil error means null.
func parseTimezone(v any) (*time.Location, error) {
	if nullish(v) {
		return nil, nil
	}
	s, ok := v.(string)
	if !ok {
		return nil, mongoerr.New(40517, "timezone must evaluate to a string, found %s", typeName(v))
	}
	if s == "UTC" || s == "GMT" || s == "Z" {
		return time.UTC, nil
	}
	if s != "" && (s[0] == '+' || s[0] == '-') {
		if off, ok := parseOffset(s[1:]); ok {
			if s[0] == '-' {
				off = -off
			}
			return time.FixedZone(s, off), nil
		}
	} else if loc, err := time.LoadLocation(s); err == nil && s != "" && s != "Local" {
		return loc, nil
	}
	return nil, mongoerr.New(40485, "unrecognized time zone identifier: \"%s\"", s)
}

// parseOffset parses "hh", "hhmm" or "hh:mm" into seconds.
func parseOffset(s string) (int, bool) {
	s = strings.Replace(s, ":", "", 1)
	if len(s) != 2 && len(s) != 4 {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, false
	}
	if len(s) == 2 {
		return n * 3600, true
	}
	return (n/100)*3600 + (n%100)*60, true
}

// namedArgs splits an operator argument that is an object of parameters (not an expression).
func namedArgs(arg any) (bson.D, bool) {
	d, ok := asDoc(arg)
	if !ok || (len(d) > 0 && strings.HasPrefix(d[0].Key, "$")) {
		return nil, false
	}
	return d, true
}

func compileDatePart(f func(t time.Time) any) opCompiler {
	return func(name string, arg any) (node, error) {
		dateArg, tzArg := arg, any(nil)
		if d, ok := namedArgs(arg); ok {
			dateArg = nil
			for _, e := range d {
				switch e.Key {
				case "date":
					dateArg = e.Value
				case "timezone":
					tzArg = e.Value
				default:
					return node{}, mongoerr.New(40535, "unrecognized option to %s: \"%s\"", name, e.Key)
				}
			}
			if dateArg == nil {
				return node{}, mongoerr.New(40539, "missing 'date' argument to %s, provided: %s", name, formatValue(arg))
			}
		} else if a, ok := asArray(arg); ok {
			if len(a) != 1 {
				return node{}, mongoerr.New(40536, "%s accepts exactly one argument if given an array, but was given %d", name, len(a))
			}
			dateArg = a[0]
		}
		date, err := compile(dateArg)
		if err != nil {
			return node{}, err
		}
		tz, err := compile(tzArg)
		if err != nil {
			return node{}, err
		}
		return eager([]node{date, tz}, func(a []any) (any, error) {
			loc := time.UTC
			if tzArg != nil {
				l, err := parseTimezone(a[1])
				if err != nil || l == nil {
					return nil, err
				}
				loc = l
			}
			if nullish(a[0]) {
				return nil, nil
			}
			t, err := coerceToDate(name, a[0])
			if err != nil {
				return nil, err
			}
			return f(t.In(loc)), nil
		}), nil
	}
}

// paramNodes compiles an object of named parameters, checking names and required ones.
func paramNodes(name string, arg any, allowed, required []string, badArg func(k string) error) (map[string]node, error) {
	d, ok := asDoc(arg)
	if !ok {
		return nil, mongoerr.New(mongoerr.FailedToParse, "%s only supports an object as its argument", name)
	}
	out := map[string]node{}
	for _, e := range d {
		known := false
		for _, a := range allowed {
			known = known || a == e.Key
		}
		if !known {
			return nil, badArg(e.Key)
		}
		n, err := compile(e.Value)
		if err != nil {
			return nil, err
		}
		out[e.Key] = n
	}
	for _, r := range required {
		if _, ok := out[r]; !ok {
			return nil, mongoerr.New(mongoerr.FailedToParse, "Missing '%s' parameter to %s", r, name)
		}
	}
	return out, nil
}

// optional evaluates a parameter that may be absent (absent reports present=false).
func optional(c *ctx, params map[string]node, key string) (v any, present bool, err error) {
	n, ok := params[key]
	if !ok {
		return nil, false, nil
	}
	v, err = n.eval(c)
	return v, true, err
}

func formatISODate(d bson.DateTime) string {
	return d.Time().UTC().Format("2006-01-02T15:04:05.000Z")
}

func compileDateToString(name string, arg any) (node, error) {
	params, err := paramNodes(name, arg, []string{"date", "format", "timezone", "onNull"}, []string{"date"},
		func(k string) error { return mongoerr.New(18534, "Unrecognized argument to $dateToString: %s", k) })
	if err != nil {
		return node{}, err
	}
	return dynamic(func(c *ctx) (any, error) {
		date, err := params["date"].eval(c)
		if err != nil {
			return nil, err
		}
		format, hasFormat, err := optional(c, params, "format")
		if err != nil {
			return nil, err
		}
		if hasFormat && !nullish(format) {
			fs, ok := format.(string)
			if !ok {
				return nil, mongoerr.New(18533, "$dateToString requires that 'format' be a string, found: %s with value %s", typeName(format), formatValue(format))
			}
			if err := validateFormat(fs); err != nil {
				return nil, err
			}
		}
		loc := time.UTC
		tzv, hasTZ, err := optional(c, params, "timezone")
		if err != nil {
			return nil, err
		}
		if hasTZ {
			if loc, err = parseTimezone(tzv); err != nil {
				return nil, err
			}
		}
		if nullish(date) {
			if v, ok, err := optional(c, params, "onNull"); ok || err != nil {
				return v, err
			}
			return nil, nil
		}
		if loc == nil {
			return nil, nil
		}
		t, err := coerceToDate(name, date)
		if err != nil {
			return nil, err
		}
		fs := "%Y-%m-%dT%H:%M:%S.%LZ"
		if hasFormat {
			if nullish(format) {
				return nil, nil
			}
			fs = format.(string)
		} else if hasTZ && loc != time.UTC {
			fs = "%Y-%m-%dT%H:%M:%S.%L"
		}
		return formatDate(fs, t.In(loc)), nil
	}), nil
}

func validateFormat(f string) error {
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		if i+1 >= len(f) {
			return mongoerr.New(18535, "Unmatched '%%' at end of format string")
		}
		i++
		if !strings.ContainsRune("dGHjLmMSuUVwYzZbB%", rune(f[i])) {
			return mongoerr.New(18536, "Invalid format character '%%%c' in format string", f[i])
		}
	}
	return nil
}

func formatDate(f string, t time.Time) string {
	var b strings.Builder
	_, offset := t.Zone()
	for i := 0; i < len(f); i++ {
		if f[i] != '%' || i+1 >= len(f) {
			b.WriteByte(f[i])
			continue
		}
		i++
		switch f[i] {
		case 'd':
			fmt.Fprintf(&b, "%02d", t.Day())
		case 'G':
			y, _ := t.ISOWeek()
			fmt.Fprintf(&b, "%04d", y)
		case 'H':
			fmt.Fprintf(&b, "%02d", t.Hour())
		case 'j':
			fmt.Fprintf(&b, "%03d", t.YearDay())
		case 'L':
			fmt.Fprintf(&b, "%03d", t.Nanosecond()/1e6)
		case 'm':
			fmt.Fprintf(&b, "%02d", int(t.Month()))
		case 'M':
			fmt.Fprintf(&b, "%02d", t.Minute())
		case 'S':
			fmt.Fprintf(&b, "%02d", t.Second())
		case 'u':
			fmt.Fprintf(&b, "%d", (int(t.Weekday())+6)%7+1)
		case 'U':
			fmt.Fprintf(&b, "%02d", sundayWeek(t))
		case 'V':
			_, w := t.ISOWeek()
			fmt.Fprintf(&b, "%02d", w)
		case 'w':
			fmt.Fprintf(&b, "%d", int(t.Weekday()))
		case 'Y':
			fmt.Fprintf(&b, "%04d", t.Year())
		case 'z':
			sign, o := '+', offset
			if o < 0 {
				sign, o = '-', -o
			}
			fmt.Fprintf(&b, "%c%02d%02d", sign, o/3600, (o%3600)/60)
		case 'Z':
			fmt.Fprintf(&b, "%+d", offset/60)
		case 'b':
			b.WriteString(t.Month().String()[:3])
		case 'B':
			b.WriteString(t.Month().String())
		case '%':
			b.WriteByte('%')
		}
	}
	return b.String()
}

func dateParseError(s, why string) error {
	return mongoerr.New(mongoerr.ConversionFailure, "Error parsing date string '%s'; %s", s, why)
}

// parseDateString parses the ISO-8601 forms mongod accepts without a format: a date, optionally
// followed by 'T' or ' ' and a time (hh:mm[:ss[.fff]]) and a zone (Z, ±hh[:mm], ±hhmm).
// Strings without a zone are read in loc.
func parseDateString(s string, loc *time.Location) (bson.DateTime, error) {
	p := &dateScanner{s: s}
	year, month, day := p.num(4, 4), -1, -1
	if p.sep('-') || p.sep('/') {
		month = p.num(1, 2)
		if p.sep('-') || p.sep('/') {
			day = p.num(1, 2)
		}
	}
	if year < 0 || month < 1 || day < 1 {
		return 0, dateParseError(s, "expected a date of the form YYYY-MM-DD")
	}
	hour, minute, sec, ms := 0, 0, 0, 0
	if p.sep('T') || p.sep(' ') {
		hour = p.num(2, 2)
		if !p.sep(':') {
			return 0, dateParseError(s, "expected a time of the form hh:mm[:ss]")
		}
		minute = p.num(2, 2)
		if p.sep(':') {
			sec = p.num(2, 2)
			if p.sep('.') {
				ms = p.fraction()
			}
		}
	}
	zone := loc
	if p.sep('Z') {
		zone = time.UTC
	} else if p.i < len(s) && (s[p.i] == '+' || s[p.i] == '-') {
		off, ok := parseOffset(s[p.i+1:])
		if !ok {
			return 0, dateParseError(s, "invalid time zone offset")
		}
		if s[p.i] == '-' {
			off = -off
		}
		zone = time.FixedZone("", off)
		p.i = len(s)
	}
	if p.bad || p.i != len(s) || hour < 0 || minute < 0 || sec < 0 || month > 12 || hour > 23 || minute > 59 || sec > 59 {
		return 0, dateParseError(s, "the string is not a valid date")
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, ms*1e6, zone)
	if t.Day() != day {
		return 0, dateParseError(s, "the day is out of range for the month")
	}
	return bson.NewDateTimeFromTime(t), nil
}

type dateScanner struct {
	s   string
	i   int
	bad bool
}

// num reads between lo and hi digits; -1 (and bad) when there are fewer than lo.
func (p *dateScanner) num(lo, hi int) int {
	start := p.i
	for p.i < len(p.s) && p.i-start < hi && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
	}
	if p.i-start < lo {
		p.bad = true
		return -1
	}
	n, _ := strconv.Atoi(p.s[start:p.i])
	return n
}

// fraction reads fractional-second digits as milliseconds.
func (p *dateScanner) fraction() int {
	start := p.i
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
	}
	digits := (p.s[start:p.i] + "000")[:3]
	if p.i == start {
		p.bad = true
	}
	n, _ := strconv.Atoi(digits)
	return n
}

func (p *dateScanner) sep(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

// parseWithFormat parses s according to a $dateToString-style format.
func parseWithFormat(s, f string, loc *time.Location) (bson.DateTime, error) {
	p := &dateScanner{s: s}
	year, month, day, hour, minute, sec, ms := 1970, 1, 1, 0, 0, 0, 0
	zone := loc
	for i := 0; i < len(f); i++ {
		if f[i] != '%' || i+1 >= len(f) {
			if !p.sep(f[i]) {
				return 0, dateParseError(s, fmt.Sprintf("expected '%c'", f[i]))
			}
			continue
		}
		i++
		switch f[i] {
		case 'Y':
			year = p.num(4, 4)
		case 'm':
			month = p.num(1, 2)
		case 'd':
			day = p.num(1, 2)
		case 'H':
			hour = p.num(1, 2)
		case 'M':
			minute = p.num(1, 2)
		case 'S':
			sec = p.num(1, 2)
		case 'L':
			ms = p.fraction()
		case 'j':
			yd := p.num(1, 3)
			month, day = 1, yd
		case 'z', 'Z':
			if p.i >= len(s) || (s[p.i] != '+' && s[p.i] != '-') {
				return 0, dateParseError(s, "expected a time zone offset")
			}
			neg := s[p.i] == '-'
			p.i++
			var off int
			if f[i] == 'Z' {
				off = p.num(1, 4) * 60
			} else {
				h := p.num(2, 2)
				p.sep(':')
				off = h*3600 + p.num(2, 2)*60
			}
			if neg {
				off = -off
			}
			zone = time.FixedZone("", off)
		case '%':
			if !p.sep('%') {
				return 0, dateParseError(s, "expected '%'")
			}
		default:
			return 0, mongoerr.New(18536, "Invalid format character '%%%c' in format string", f[i])
		}
		if p.bad {
			return 0, dateParseError(s, "the string does not match the format")
		}
	}
	if p.i != len(s) {
		return 0, dateParseError(s, "trailing data")
	}
	return bson.NewDateTimeFromTime(time.Date(year, time.Month(month), day, hour, minute, sec, ms*1e6, zone)), nil
}

func compileDateFromString(name string, arg any) (node, error) {
	params, err := paramNodes(name, arg, []string{"dateString", "format", "timezone", "onError", "onNull"}, []string{"dateString"},
		func(k string) error { return mongoerr.New(40541, "Unrecognized argument to $dateFromString: %s", k) })
	if err != nil {
		return node{}, err
	}
	return dynamic(func(c *ctx) (any, error) {
		fail := func(err error) (any, error) {
			if v, ok, e := optional(c, params, "onError"); ok || e != nil {
				if e != nil {
					return nil, e
				}
				return v, nil
			}
			return nil, err
		}
		ds, err := params["dateString"].eval(c)
		if err != nil {
			return nil, err
		}
		loc := time.UTC
		if tzv, ok, err := optional(c, params, "timezone"); err != nil {
			return nil, err
		} else if ok {
			if loc, err = parseTimezone(tzv); err != nil || loc == nil {
				return nil, err
			}
		}
		format, hasFormat, err := optional(c, params, "format")
		if err != nil {
			return nil, err
		}
		if hasFormat && !nullish(format) {
			if _, ok := format.(string); !ok {
				return nil, mongoerr.New(40684, "$dateFromString requires that 'format' be a string, found: %s with value %s", typeName(format), formatValue(format))
			}
		}
		if nullish(ds) {
			if v, ok, err := optional(c, params, "onNull"); ok || err != nil {
				return v, err
			}
			return nil, nil
		}
		s, ok := ds.(string)
		if !ok {
			return fail(mongoerr.New(mongoerr.ConversionFailure, "$dateFromString requires that 'dateString' be a string, found: %s with value %s", typeName(ds), formatValue(ds)))
		}
		if hasFormat && nullish(format) {
			return nil, nil
		}
		var d bson.DateTime
		if hasFormat {
			d, err = parseWithFormat(s, format.(string), loc)
		} else {
			d, err = parseDateString(s, loc)
		}
		if err != nil {
			if mongoerr.Is(err, mongoerr.ConversionFailure) {
				return fail(err)
			}
			return nil, err
		}
		return d, nil
	}), nil
}

var timeUnits = []string{"year", "quarter", "month", "week", "day", "hour", "minute", "second", "millisecond"}

func parseTimeUnit(op string, v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", mongoerr.New(5439013, "%s requires 'unit' to be a string, but got %s", op, typeName(v))
	}
	for _, u := range timeUnits {
		if u == s {
			return s, nil
		}
	}
	return "", mongoerr.New(5439014, "%s parameter 'unit' value cannot be recognized as a time unit: %s", op, s)
}

func compileDateAdd(name string, arg any) (node, error) {
	params, err := paramNodes(name, arg, []string{"startDate", "unit", "amount", "timezone"}, []string{"startDate", "unit", "amount"},
		func(k string) error { return mongoerr.New(5166302, "Unrecognized argument to %s: %s", name, k) })
	if err != nil {
		return node{}, err
	}
	tz, hasTZ := params["timezone"]
	if !hasTZ {
		tz = constant(nil)
	}
	return eager([]node{params["startDate"], params["unit"], params["amount"], tz}, func(a []any) (any, error) {
		if nullish(a[0]) || nullish(a[1]) || nullish(a[2]) {
			return nil, nil
		}
		loc := time.UTC
		if hasTZ {
			l, err := parseTimezone(a[3])
			if err != nil || l == nil {
				return nil, err
			}
			loc = l
		}
		start, err := coerceToDate(name, a[0])
		if err != nil {
			return nil, mongoerr.New(5166403, "%s requires startDate to be convertible to a date", name)
		}
		unit, err := parseTimeUnit(name, a[1])
		if err != nil {
			return nil, err
		}
		amount, ok := bsonkit.ToInt64Exact(a[2])
		if !ok {
			return nil, mongoerr.New(5166405, "%s expects integer amount of time units", name)
		}
		if name == "$dateSubtract" {
			amount = -amount
		}
		return bson.NewDateTimeFromTime(addUnits(start.In(loc), unit, amount)), nil
	}), nil
}

// addUnits adds amount units to t; calendar units work on t's wall clock and clamp the day to
// the end of a shorter month (Jan 31 + 1 month = Feb 28/29), as MongoDB does.
func addUnits(t time.Time, unit string, amount int64) time.Time {
	switch unit {
	case "millisecond":
		return t.Add(time.Duration(amount) * time.Millisecond)
	case "second":
		return t.Add(time.Duration(amount) * time.Second)
	case "minute":
		return t.Add(time.Duration(amount) * time.Minute)
	case "hour":
		return t.Add(time.Duration(amount) * time.Hour)
	case "day":
		return t.AddDate(0, 0, int(amount))
	case "week":
		return t.AddDate(0, 0, int(amount)*7)
	}
	months := amount
	switch unit {
	case "quarter":
		months *= 3
	case "year":
		months *= 12
	}
	total := int64(t.Year())*12 + int64(t.Month()-1) + months
	y, m := int(total/12), time.Month(total%12+1)
	if total%12 < 0 {
		y, m = int(total/12)-1, time.Month(total%12+13)
	}
	last := time.Date(y, m+1, 0, 0, 0, 0, 0, t.Location()).Day()
	return time.Date(y, m, min(t.Day(), last), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), t.Location())
}

func compileDateDiff(name string, arg any) (node, error) {
	params, err := paramNodes(name, arg, []string{"startDate", "endDate", "unit", "timezone", "startOfWeek"}, []string{"startDate", "endDate", "unit"},
		func(k string) error { return mongoerr.New(5166302, "Unrecognized argument to $dateDiff: %s", k) })
	if err != nil {
		return node{}, err
	}
	return dynamic(func(c *ctx) (any, error) {
		var vals [3]any
		for i, k := range []string{"startDate", "endDate", "unit"} {
			v, err := params[k].eval(c)
			if err != nil || nullish(v) {
				return nil, err
			}
			vals[i] = v
		}
		sow := 0 // Sunday
		if s, ok, err := optional(c, params, "startOfWeek"); err != nil {
			return nil, err
		} else if ok && vals[2] == "week" {
			if nullish(s) {
				return nil, nil
			}
			if sow, err = parseDayOfWeek(s); err != nil {
				return nil, err
			}
		}
		loc := time.UTC
		if tzv, ok, err := optional(c, params, "timezone"); err != nil {
			return nil, err
		} else if ok {
			if loc, err = parseTimezone(tzv); err != nil || loc == nil {
				return nil, err
			}
		}
		var ts [2]time.Time
		for i, k := range []string{"startDate", "endDate"} {
			t, err := coerceToDate(name, vals[i])
			if err != nil {
				return nil, mongoerr.New(5166307, "$dateDiff requires '%s' to be a date, but got %s", k, typeName(vals[i]))
			}
			ts[i] = t.In(loc)
		}
		unit, err := parseTimeUnit(name, vals[2])
		if err != nil {
			return nil, err
		}
		return dateDiff(ts[0], ts[1], unit, sow), nil
	}), nil
}

func parseDayOfWeek(v any) (int, error) {
	s, ok := v.(string)
	if ok {
		for i, d := range []string{"sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"} {
			if l := strings.ToLower(s); l == d || l == d[:3] {
				return i, nil
			}
		}
	}
	return 0, mongoerr.New(5439015, "$dateDiff parameter 'startOfWeek' value cannot be recognized as a day of a week: %s", formatValue(v))
}

// dateDiff counts the unit boundaries crossed between a and b on their wall clock.
func dateDiff(a, b time.Time, unit string, startOfWeek int) int64 {
	wall := func(t time.Time) int64 { _, off := t.Zone(); return t.UnixMilli() + int64(off)*1000 }
	floorDiv := func(x, y int64) int64 {
		q := x / y
		if (x%y != 0) && ((x < 0) != (y < 0)) {
			q--
		}
		return q
	}
	wa, wb := wall(a), wall(b)
	switch unit {
	case "millisecond":
		return b.UnixMilli() - a.UnixMilli()
	case "second":
		return floorDiv(wb, 1000) - floorDiv(wa, 1000)
	case "minute":
		return floorDiv(wb, 60_000) - floorDiv(wa, 60_000)
	case "hour":
		return floorDiv(wb, 3_600_000) - floorDiv(wa, 3_600_000)
	case "day":
		return floorDiv(wb, 86_400_000) - floorDiv(wa, 86_400_000)
	case "week":
		// Day 0 (1970-01-01) was a Thursday (weekday 4).
		week := func(w int64) int64 { return floorDiv(floorDiv(w, 86_400_000)+4-int64(startOfWeek), 7) }
		return week(wb) - week(wa)
	case "month":
		return int64(b.Year()*12+int(b.Month())) - int64(a.Year()*12+int(a.Month()))
	case "quarter":
		return int64(b.Year()*4+(int(b.Month())-1)/3) - int64(a.Year()*4+(int(a.Month())-1)/3)
	}
	return int64(b.Year() - a.Year())
}
