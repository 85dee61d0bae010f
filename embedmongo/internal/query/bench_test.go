package query

import "testing"

func BenchmarkCompileMatchLockFilter(b *testing.B) {
	filter := doc(b, `{"_id": "acct-1", "lockOwner": "w1", "fencingToken": 7}`)
	d := doc(b, `{"_id": "acct-1", "balance": 100, "lockOwner": "w1", "fencingToken": 7, "history": [1, 2, 3]}`)
	b.ReportAllocs()
	for b.Loop() {
		m, err := Compile(filter, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if ok, _ := m.Match(d); !ok {
			b.Fatal("no match")
		}
	}
}

func BenchmarkCompileMatchOrExpr(b *testing.B) {
	filter := doc(b, `{"_id": "acct-1", "$or": [{"lockOwner": null}, {"$expr": {"$lt": ["$lockExpires", 100]}}]}`)
	d := doc(b, `{"_id": "acct-1", "balance": 100, "lockOwner": "w1", "lockExpires": 50}`)
	b.ReportAllocs()
	for b.Loop() {
		m, err := Compile(filter, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if ok, err := m.Match(d); !ok || err != nil {
			b.Fatal("no match", err)
		}
	}
}
