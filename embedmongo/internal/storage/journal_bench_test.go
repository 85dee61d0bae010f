package storage

import (
	"testing"

	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// journalDoc is shaped like bankd's transfer journal entries.
func journalDoc(i int, accts []string) bson.D {
	return bson.D{
		{Key: "_id", Value: uuid.NewString()},
		{Key: "from", Value: accts[i%len(accts)]},
		{Key: "to", Value: accts[(i*7+1)%len(accts)]},
		{Key: "accounts", Value: bson.A{accts[i%len(accts)], accts[(i*7+1)%len(accts)]}},
		{Key: "amount", Value: int64(5)},
		{Key: "state", Value: "completed"},
		{Key: "createdAt", Value: bson.DateTime(1_700_000_000_000 + int64(i/3))},
	}
}

// BenchmarkJournalInsert inserts into a collection of 60,000 transfer-like documents with each
// of the journal's secondary indexes alone: the multikey (accounts, createdAt, _id) index, whose
// entries share their account with a dozen others, and the
// (state, createdAt) index, whose entries share their state with most others.
func BenchmarkJournalInsert(b *testing.B) {
	accts := make([]string, 10000)
	for i := range accts {
		accts[i] = uuid.NewString()
	}
	for _, spec := range []struct {
		name string
		key  bson.D
	}{
		{"none", nil},
		{"accounts", bson.D{{Key: "accounts", Value: int32(1)}, {Key: "createdAt", Value: int32(-1)}, {Key: "_id", Value: int32(-1)}}},
		{"state", bson.D{{Key: "state", Value: int32(1)}, {Key: "createdAt", Value: int32(1)}}},
	} {
		b.Run(spec.name, func(b *testing.B) {
			s, _ := Open(Options{})
			c, _ := s.CollectionOrCreate("bank", "transfers")
			if spec.key != nil {
				if _, err := c.CreateIndexes([]IndexSpec{{Key: spec.key}}); err != nil {
					b.Fatal(err)
				}
			}
			for i := 0; i < 60000; i++ {
				_ = c.Write(func(tx *Tx) error { _, err := tx.Insert(journalDoc(i, accts)); return err })
			}
			docs := make([]bson.D, b.N)
			for i := range docs {
				docs[i] = journalDoc(60000+i, accts)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				_ = c.Write(func(tx *Tx) error { _, err := tx.Insert(docs[i]); return err })
			}
		})
	}
}
