package update

import (
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestConcurrentApply shares one compiled update and one input document across goroutines,
// including the run-time merging paths (positional + index, overlapping array filters); run
// with -race it checks that Apply neither mutates shared state nor the input.
func TestConcurrentApply(t *testing.T) {
	u, err := Compile(d(t, `{"$set":{"a.$[x].q":1,"a.$[y].r":2,"b.$":5,"b.1":6},"$inc":{"n":1},"$push":{"h":7}}`),
		Options{ArrayFilters: []bson.D{d(t, `{"x.p":1}`), d(t, `{"y.p":1}`)}})
	if err != nil {
		t.Fatal(err)
	}
	doc := d(t, `{"_id":1,"a":[{"p":1},{"p":2}],"b":[0,0,0],"n":1,"h":[1]}`)
	want := d(t, `{"_id":1,"a":[{"p":1,"q":1,"r":2},{"p":2}],"b":[0,6,5],"n":2,"h":[1,7]}`)
	before := js(doc)
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				got, err := u.Apply(doc, 2, false)
				if err != nil {
					errs <- err.Error()
					return
				}
				if !identical(got, want) {
					errs <- js(got)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	if js(doc) != before {
		t.Fatalf("input mutated: %s", js(doc))
	}
}
