package load

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestBucketsCoverValues(t *testing.T) {
	// Every value falls in a bucket whose bounds contain it, and buckets are
	// ordered, so percentiles walk values in order.
	prevHi := int64(-1)
	for i := range numBuckets - 1 {
		lo, hi := bucketBounds(i)
		if lo != prevHi+1 || hi < lo {
			t.Fatalf("bucket %d = [%d, %d] after hi %d", i, lo, hi, prevHi)
		}
		prevHi = hi
	}
	for _, v := range []int64{0, 1, 31, 32, 33, 63, 64, 65, 1000, 123456, 1 << 30} {
		lo, hi := bucketBounds(bucketOf(v))
		if v < lo || v > hi {
			t.Errorf("value %d in bucket [%d, %d]", v, lo, hi)
		}
	}
}

func TestPercentileExactSmallValues(t *testing.T) {
	var h Histogram
	for v := 1; v <= 10; v++ { // 1..10 µs are exact buckets
		h.Record(time.Duration(v) * time.Microsecond)
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{
		{0.5, 5 * time.Microsecond},   // nearest rank ceil(5) = 5th value
		{0.51, 6 * time.Microsecond},  // ceil(5.1) = 6
		{0.99, 10 * time.Microsecond}, // ceil(9.9) = 10
		{1, 10 * time.Microsecond},
		{0.01, 1 * time.Microsecond},
	} {
		if got := h.Percentile(c.q); got != c.want {
			t.Errorf("p%v = %v, want %v", c.q*100, got, c.want)
		}
	}
}

func TestPercentileRelativeError(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	var h Histogram
	var vals []time.Duration
	for range 50_000 {
		// Log-spread between 50 µs and about 2 s, like a tail-heavy latency.
		d := time.Duration(50*(1<<r.IntN(16))+r.IntN(1000)) * time.Microsecond
		vals = append(vals, d)
		h.Record(d)
	}
	slices.Sort(vals)
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
		exact := vals[int(q*float64(len(vals))+0.999999)-1]
		got := h.Percentile(q)
		if rel := float64(got-exact) / float64(exact); rel > 0.016 || rel < -0.016 {
			t.Errorf("p%v = %v, exact %v (off %.2f%%)", q*100, got, exact, rel*100)
		}
	}
	if h.Max() != vals[len(vals)-1].Truncate(time.Microsecond) {
		t.Errorf("max %v, want %v", h.Max(), vals[len(vals)-1])
	}
}

func TestHistogramMergeResetEmpty(t *testing.T) {
	var a, b Histogram
	if a.Percentile(0.99) != 0 {
		t.Fatal("empty histogram has a percentile")
	}
	for range 99 {
		a.Record(time.Millisecond)
	}
	b.Record(time.Second)
	a.Merge(&b)
	if a.Count() != 100 {
		t.Fatalf("count %d", a.Count())
	}
	if p := a.Percentile(0.99); p < 984*time.Microsecond || p > 1016*time.Microsecond {
		t.Errorf("p99 %v, want ≈1ms (99 of 100 values)", p)
	}
	if p := a.Percentile(1); p < 984*time.Millisecond || p > time.Second {
		t.Errorf("p100 %v, want ≈1s", p)
	}
	a.Reset()
	if a.Count() != 0 || a.Max() != 0 {
		t.Error("reset left values")
	}
}
