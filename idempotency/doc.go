// Package idempotency remembers client requests by key, so that a retried
// request gets the first answer instead of being done twice.
//
// A record per (scope, key) holds the SHA-256 fingerprint of the canonical
// request, a state (in flight, done), the stored outcome (HTTP status and
// body) and an expiry enforced by a TTL index (24 h by default).
//
//	rec, err := store.Begin(ctx, idempotency.Begin{Scope: apiKey, Key: k, Fingerprint: fp, Request: canon})
//	switch {
//	case errors.Is(err, idempotency.ErrKeyMismatch): // 422: same key, different request
//	case errors.Is(err, idempotency.ErrInFlight):    // 409: the first one is still running
//	case err != nil:                                 // 503/500
//	case rec.Replay:                                 // answer rec.Outcome again
//	default:                                         // ours: do the work with id rec.ResourceID,
//		store.Complete(ctx, rec, outcome)            // then remember the answer
//	}
//
// Begin creates the record in flight and leases it to the caller in one
// upsert, using the same lease protocol as package lock (owner, fencing token,
// expiry judged by the database clock). While the lease lives, duplicates get
// ErrInFlight. If the caller dies, its lease expires: the next retry with the
// same request takes the record over (Record.TakenOver), keeping ResourceID, so
// the work it re-runs is the same work (the transfer of that id), never a
// second one. A caller that fails transiently calls Release to let a retry
// take over at once. Settle, run by the recovery loop, takes over records
// nobody came back for and completes them by re-running the stored request, so
// no record stays in flight forever.
//
// Complete and Release are fenced by the lease: once taken over, the old
// owner's Complete fails with ErrLeaseLost and changes nothing.
package idempotency
