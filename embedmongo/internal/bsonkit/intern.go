package bsonkit

import (
	"hash/maphash"
	"sync/atomic"
)

// internTable hands out one shared string per field name seen, instead of a new one per
// decode: a database reads the same few names over and over (every document of a collection
// has them), and a fresh string for each is most of what decoding allocates. It is a
// fixed-size, lock-free cache: a slot holds the last name hashed to it, so a name evicted by
// a colliding one costs an allocation again, never a wrong answer.
type internTable struct {
	seed  maphash.Seed
	slots [internSlots]atomic.Pointer[string]
}

const (
	internSlots  = 1024
	internMaxLen = 64 // longer names are rare and not worth a slot
)

var fieldNames = newInternTable()

func newInternTable() *internTable { return &internTable{seed: maphash.MakeSeed()} }

func (t *internTable) intern(b []byte) string {
	if len(b) > internMaxLen {
		return string(b)
	}
	slot := &t.slots[maphash.Bytes(t.seed, b)%internSlots]
	if p := slot.Load(); p != nil && *p == string(b) {
		return *p
	}
	s := string(b)
	slot.Store(&s)
	return s
}
