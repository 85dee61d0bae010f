// Package transaction moves money between accounts, exactly once, through
// crashes and retries, without multi-document transactions: it works the
// same on a standalone mongod, a sharded cluster and the embedded engine.
//
// # Journal
//
// A transfer is first written to its own collection, "transfers", in state
// pending, under the caller's transfer id. The id makes creation idempotent:
// asking again with the same id drives the existing transfer to its end and
// returns it. The insert is an upsert that also takes a lease (package lock)
// on the transfer document: whoever holds that lease drives the transfer, and
// every state change is fenced by it.
//
// # Acquire and fence
//
// The driver then leases both accounts (in id order, so opposite transfers
// cannot deadlock) and applies the two legs. Each leg is one update of one
// account whose filter carries the lease's owner and fencing token and the
// absence of the transfer's marker, and which changes the balance and pushes
// the transfer id onto the account's pendingTransfers in the same write:
//
//	filter {_id, lockOwner, fencingToken, pendingTransfers: {$ne: T}, balance: {$gte: amount}}
//	update {$inc: {balance: -amount}, $push: {pendingTransfers: T}}
//
// So a leg is applied at most once (the marker), only by the live lease
// holder (the token), and never overdraws (the balance condition, on the
// debit of a customer account; an unmet one fails the transfer with
// insufficient_funds). Each leg write also releases its account's lease
// ($unset of the lease fields, still fenced) unless a goroutine of this
// process waits for that account, which then gets the lease handed over
// (lock.Config.MaxHold). Releasing the source before the credit is safe: its
// lease guards the balance condition, already applied; the source's marker
// keeps the debit from being repeated by anyone, and the transfer's lease
// keeps every other driver of this transfer away until the credit is made
// (under the destination's lease) or the transfer is recovered. With both
// legs on the balances the transfer is marked applied; the markers are then
// removed and the transfer marked completed, releasing its lease in the same
// write:
//
//	pending ──▶ applied ──▶ completed
//	   └──▶ failed (no leg applied; reason recorded)
//
// # Recover
//
// A crash can stop this between any two writes. Every instance runs
// RunRecovery, which looks for unfinished transfers whose lease has expired
// by the database clock, claims one through its lease (a new token) and
// drives it from where it stands: in pending, a leg whose marker is on the
// account is already applied and is skipped. A holder that stalled and
// resumes finds its fenced writes refused, learns its lease is lost and picks
// the transfer up again, finding it finished. Hooks let tests stop or stall
// an instance before each step (Steps).
//
// # Batches
//
// New transfers do not each run this alone: those that arrive while a batch
// is being applied form the next batch (batch.go), which takes the same
// steps for all of them with one command per step and one write per
// account, leaving the same states and markers, so that everything above
// (fencing, markers, recovery) holds for batched transfers unchanged. One
// difference: a batch completes its transfers before their markers go, and
// the markers then go with the next lease this instance takes on each
// account (a $pull in the lease's own write). Markers matter only while a
// transfer is pending; nothing drives a terminal one.
// Retries of journaled transfers, recovery, and anything a batch cannot
// settle are driven alone.
//
// Deposits and withdrawals are transfers from and to the external account of
// their currency, which may go negative, so Audit can check that every
// balance equals its credits minus its debits and that each currency sums to
// zero.
package transaction
