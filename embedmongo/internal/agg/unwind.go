package agg

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

func parseUnwind(_ *runner, spec any, _ pipeCtx) (stage, error) {
	var pathStr, indexField string
	preserve := false
	switch x := spec.(type) {
	case string:
		pathStr = x
	case bson.D:
		for _, e := range x {
			switch e.Key {
			case "path":
				s, ok := e.Value.(string)
				if !ok {
					return nil, mongoerr.New(28808, "expected a string as the path for $unwind stage, got %s", bsonkit.TypeName(e.Value))
				}
				pathStr = s
			case "includeArrayIndex":
				s, ok := e.Value.(string)
				if !ok {
					return nil, mongoerr.New(28810, "expected a non-empty string for the includeArrayIndex  option to $unwind stage, got %s", bsonkit.TypeName(e.Value))
				}
				if s == "" {
					return nil, mongoerr.New(28810, "expected a non-empty string for the includeArrayIndex  option to $unwind stage, got string")
				}
				if strings.HasPrefix(s, "$") {
					return nil, mongoerr.New(28822, "includeArrayIndex option to $unwind stage should not be prefixed with a '$': %s", s)
				}
				indexField = s
			case "preserveNullAndEmptyArrays":
				b, ok := e.Value.(bool)
				if !ok {
					return nil, mongoerr.New(28809, "expected a boolean for the preserveNullAndEmptyArrays option to $unwind stage, got %s", bsonkit.TypeName(e.Value))
				}
				preserve = b
			default:
				return nil, mongoerr.New(28811, "unrecognized option to $unwind stage: %s", e.Key)
			}
		}
		if pathStr == "" {
			return nil, mongoerr.New(28812, "no path specified to $unwind stage")
		}
	default:
		return nil, mongoerr.New(15981, "expected either a string or an object as specification for $unwind stage, got %s", bsonkit.TypeName(spec))
	}
	if !strings.HasPrefix(pathStr, "$") {
		return nil, mongoerr.New(28818, "path option to $unwind stage should be prefixed with a '$': %s", pathStr)
	}
	path, err := parseFieldPath(pathStr[1:])
	if err != nil {
		return nil, err
	}
	var indexPath []string
	if indexField != "" {
		if indexPath, err = parseFieldPath(indexField); err != nil {
			return nil, err
		}
	}
	return func(in []bson.D) ([]bson.D, error) {
		var out []bson.D
		for _, d := range in {
			out = unwindDoc(out, d, path, indexPath, preserve)
		}
		return out, nil
	}, nil
}

// unwindDoc appends the documents $unwind makes of d: one per array element; a non-array
// value is a one-element array; null, missing and [] yield d only when preserving (with the
// empty array removed and a null index).
func unwindDoc(out []bson.D, d bson.D, path, indexPath []string, preserve bool) []bson.D {
	v := getField(d, path)
	arr, isArr := v.(bson.A)
	if !isArr {
		if nullish(v) {
			if preserve {
				if indexPath != nil {
					d = setField(d, indexPath, nil)
				}
				out = append(out, d)
			}
			return out
		}
		if indexPath != nil {
			d = setField(d, indexPath, nil)
		}
		return append(out, d)
	}
	if len(arr) == 0 {
		if preserve {
			d = setField(d, path, bsonkit.Missing)
			if indexPath != nil {
				d = setField(d, indexPath, nil)
			}
			out = append(out, d)
		}
		return out
	}
	for i, el := range arr {
		nd := setField(d, path, el)
		if indexPath != nil {
			nd = setField(nd, indexPath, int64(i))
		}
		out = append(out, nd)
	}
	return out
}
