package query

import (
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
)

type bitsOp int

const (
	bitsAllSet bitsOp = iota
	bitsAnySet
	bitsAllClear
	bitsAnyClear
)

// bitsLeaf is $bitsAllSet/$bitsAnySet/$bitsAllClear/$bitsAnyClear over bit positions. It
// matches integral numbers (two's complement, sign-extended past bit 63) and binData.
type bitsLeaf struct {
	op        bitsOp
	positions []int
}

func parseBits(name string, v any) (fieldPred, error) {
	ops := map[string]bitsOp{"$bitsAllSet": bitsAllSet, "$bitsAnySet": bitsAnySet,
		"$bitsAllClear": bitsAllClear, "$bitsAnyClear": bitsAnyClear}
	l := bitsLeaf{op: ops[name]}
	switch x := v.(type) {
	case bson.A:
		for _, p := range x {
			if !bsonkit.IsNumber(p) {
				return nil, badValue("bit positions must be an integer but got: %v", p)
			}
			n, ok := bsonkit.ToInt64Exact(p)
			if !ok {
				return nil, badValue("bit positions must be an integer but got: %s", bsonkit.FormatNumber(p))
			}
			if n < 0 {
				return nil, badValue("bit positions must be >= 0 but got: %d", n)
			}
			l.positions = append(l.positions, int(min(n, math.MaxInt32)))
		}
	case bson.Binary:
		for i, b := range x.Data {
			for j := 0; j < 8; j++ {
				if b&(1<<j) != 0 {
					l.positions = append(l.positions, i*8+j)
				}
			}
		}
	default:
		if !bsonkit.IsNumber(v) {
			return nil, badValue("%s takes an Array, a number, or a BinData but received: %v", name, v)
		}
		n, ok := bsonkit.ToInt64Exact(v)
		if !ok {
			return nil, badValue("%s cannot represent value as a 64-bit integer: %s", name, bsonkit.FormatNumber(v))
		}
		if n < 0 {
			return nil, badValue("%s cannot take a negative number: %d", name, n)
		}
		for j := 0; j < 63; j++ {
			if n&(1<<j) != 0 {
				l.positions = append(l.positions, j)
			}
		}
	}
	return simplePred{l}, nil
}

func (l bitsLeaf) matchValue(v any, _ *matchCtx) bool {
	var bit func(int) bool
	switch x := v.(type) {
	case bson.Binary:
		bit = func(p int) bool {
			return p/8 < len(x.Data) && x.Data[p/8]&(1<<(p%8)) != 0
		}
	default:
		if !bsonkit.IsNumber(v) {
			return false
		}
		n, ok := bsonkit.ToInt64Exact(v)
		if !ok {
			return false
		}
		bit = func(p int) bool {
			if p > 63 {
				return n < 0
			}
			return uint64(n)&(1<<p) != 0
		}
	}
	for _, p := range l.positions {
		set := bit(p)
		switch l.op {
		case bitsAllSet:
			if !set {
				return false
			}
		case bitsAnySet:
			if set {
				return true
			}
		case bitsAllClear:
			if set {
				return false
			}
		case bitsAnyClear:
			if !set {
				return true
			}
		}
	}
	return l.op == bitsAllSet || l.op == bitsAllClear
}
