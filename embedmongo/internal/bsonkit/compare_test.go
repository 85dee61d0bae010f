package bsonkit

import (
	"math"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestCompareFastPathsAgree checks that Compare's same-type shortcuts give
// the general ordering's answer for every pair, mixed types included.
func TestCompareFastPathsAgree(t *testing.T) {
	vals := []any{
		"", "a", "ab", "b", "\xff", "é", bson.Symbol("a"),
		int64(math.MinInt64), int64(-1), int64(0), int64(7), int64(math.MaxInt64),
		int32(math.MinInt32), int32(-1), int32(0), int32(7), int32(math.MaxInt32),
		float64(7), math.NaN(), math.Inf(-1),
		bson.DateTime(-5), bson.DateTime(0), bson.DateTime(1700000000000),
		nil, true, bson.D{{Key: "a", Value: int32(1)}}, bson.A{"x"},
	}
	for _, a := range vals {
		for _, b := range vals {
			if got, want := Compare(a, b), CompareWith(a, b, nil); got != want {
				t.Errorf("Compare(%#v, %#v) = %d, general ordering says %d", a, b, got, want)
			}
		}
	}
}

func BenchmarkCompareStrings(b *testing.B) {
	x, y := "6f1c2a52-4c0e-4d8f-9a53-0b6f3c1d2e41", "6f1c2a52-4c0e-4d8f-9a53-0b6f3c1d2e42"
	for b.Loop() {
		Compare(x, y)
	}
}
