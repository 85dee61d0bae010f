package bsonkit

import (
	"fmt"
	"sync"
	"testing"
	"unsafe"
)

// Many more names than slots, from several goroutines at once: every answer is the name asked
// for, whatever the evictions, and a name still in its slot comes back as the same string.
func TestInternNeverAnswersAnotherName(t *testing.T) {
	table := newInternTable()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 * internSlots {
				name := fmt.Sprintf("field-%d", (i*7+g)%(4*internSlots))
				if got := table.intern([]byte(name)); got != name {
					t.Errorf("intern(%q) = %q", name, got)
					return
				}
			}
		}()
	}
	wg.Wait()
	long := make([]byte, internMaxLen+1)
	if got := table.intern(long); got != string(long) {
		t.Fatal("a long name came back changed")
	}
	a := table.intern([]byte("balance"))
	if b := table.intern([]byte("balance")); unsafe.StringData(a) != unsafe.StringData(b) {
		t.Fatal("balance interned twice gave different strings")
	}
}
