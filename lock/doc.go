// Package lock hands out leases on MongoDB documents, with fencing tokens.
//
// # Acquire
//
// A lease lives in the leased document itself, in four fields: lockOwner
// (who holds it), lockTimestamp and lockDuration (when it was taken, by the
// database's clock, and for how long) and fencingToken (a counter). Acquire
// is one findOneAndUpdate whose filter admits the document only when no one
// holds it or its lease has expired, judged by the server:
//
//	{_id: K, $or: [{lockOwner: null},
//	               {$expr: {$lte: [{$add: ["$lockTimestamp", "$lockDuration"]}, "$$NOW"]}}]}
//
// and whose pipeline update writes the new owner, lockTimestamp: "$$NOW",
// the duration, and fencingToken + 1. The server's clock decides expiry, so an
// instance whose own clock is skewed cannot take a live lease. No match means
// someone holds it: the caller waits, polling with jittered exponential
// backoff up to a deadline (ErrTimeout). Goroutines of one process wanting
// the same document queue locally, first come first served, and only the
// first in line polls the database. AcquirePair takes two leases in
// ascending _id order, so A→B and B→A cannot deadlock, and gives the first
// back if the second cannot be had in time.
//
// # Fence
//
// A lease can expire while its holder is stalled (a GC pause, a slow
// network), and another instance may then take it. So every write made under
// a lease puts the holder's owner and token in its filter (Lease.Fence): once
// someone else holds the lease, the token has moved on and a stale holder's
// write matches nothing. The writer learns it lost the lease (ErrLeaseLost)
// and nothing was written. Release and Renew are fenced the same way.
//
// # Hand-off
//
// With Config.MaxHold, Release passes a young lease directly to the next
// goroutine of this process waiting for the same document, sparing the
// database a release and an acquisition, for a bounded time; the token
// stays, so fencing against other instances is unchanged.
//
// # Release in a write
//
// A holder whose last write under a lease is fenced anyway can release the
// lease in that same write ($unset of ReleaseFields), saving a round trip,
// and then tells the Locker so (ReleasedByWrite), which passes the local turn
// on. CanReleaseInWrite says when: unless a hand-off to a local waiter is
// possible, which costs no database write at all. A lease given up this way
// (or by Release, Drop or a hand-off) is done with: a later Release or Drop
// by the same holder neither writes nor ends anyone else's turn.
//
// # Many at once
//
// AcquireMany takes many free leases in two round trips: Acquire's
// conditional filter with the same write as update operators (LeaseOps:
// $currentDate for the database's time, $inc for the token), as one update
// of all the documents (each taken atomically on its own), also writing an
// acquisition id by which one read returns exactly the documents leased.
// Operators need no expression compiled per document, and let a caller add
// its own (a $pull, say), applied only where the lease is taken. InsertMany creates
// many new leased documents in one round trip. Neither waits: what is held
// elsewhere is left out, for the caller to acquire alone.
//
// Package transaction builds its journal and recovery on these leases.
package lock
