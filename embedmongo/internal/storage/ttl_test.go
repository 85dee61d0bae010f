package storage

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"
)

func TestExpireTTL(t *testing.T) {
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	date := func(ago time.Duration) bson.DateTime { return bson.NewDateTimeFromTime(now.Add(-ago)) }
	s := openMem(t)
	c := mustColl(t, s, "sessions")
	secs := int64(60)
	_, err := c.CreateIndexes([]IndexSpec{{Key: key("at", int32(1)), ExpireAfterSeconds: &secs}})
	require.NoError(t, err)
	plain := mustColl(t, s, "plain") // no TTL index: untouched
	insertAll(t, plain, doc(1, "at", date(time.Hour)))

	insertAll(t, c,
		doc(1, "at", date(2*time.Minute)),                              // expired
		doc(2, "at", date(30*time.Second)),                             // not yet
		doc(3, "at", date(60*time.Second)),                             // exactly at the cutoff: kept
		doc(4, "at", "2020-01-01"),                                     // not a date: never
		doc(5),                                                         // missing: never
		doc(6, "at", bson.A{date(0), date(time.Hour)}),                 // earliest date counts: expired
		doc(7, "at", bson.A{int32(1), "x"}),                            // no dates: never
		doc(8, "at", bson.D{{Key: "d", Value: date(time.Hour)}}),       // a document: never
		doc(9, "at", bson.A{date(-time.Hour), date(61 * time.Second)}), // expired
	)
	n, err := s.ExpireTTL(now)
	require.NoError(t, err)
	require.Equal(t, 3, n)
	docs, err := c.Find(nil, all)
	require.NoError(t, err)
	require.Equal(t, []any{int32(2), int32(3), int32(4), int32(5), int32(7), int32(8)}, ids(docs))
	require.EqualValues(t, 1, plain.Count())

	n, err = s.ExpireTTL(now.Add(time.Hour))
	require.NoError(t, err)
	require.Equal(t, 2, n, "docs 2 and 3 expire later")
}
