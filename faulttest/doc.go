// Package faulttest proves bankd's guarantees under faults: processes killed mid-transfer,
// instances dying while others share the database, a database that errors, hangs up or
// stalls, and an instance whose clock is wrong. It holds tests only.
//
// The process tests build the real binaries (cmd/bankd, cmd/embedmongo) once per run and drive
// them over HTTP on 127.0.0.1, like a client would: every transfer carries its own
// Idempotency-Key, and a request whose answer never came (connection refused or reset, 409
// in flight, 503 busy or unavailable) is sent again with the same key and body until it gets
// a final answer (201, or 422 insufficient_funds). Each test then checks through the API that
//   - every key produced exactly one transfer: the journal lists one transfer per key, the
//     completed ones are exactly those answered 201 (a replay returns the same id), the
//     failed ones exactly those answered 422;
//   - no transfer is left pending or applied after recovery;
//   - every balance equals its deposits plus credits minus debits of the answered transfers,
//     so their sum equals the total deposited;
//   - GET /v1/audit reports ok.
//
// Scenarios:
//
//  1. Kill and restart (TestProcessFaults/KillNineAndRestart): bankd on a data directory
//     with short leases is SIGKILLed mid-load and restarted on the same directory. Its
//     recovery loop finishes the transfers the dead process left half done once their
//     leases expire; the clients' retries get the original outcome.
//  2. Shared engine (TestProcessFaults/ThreeInstancesOneKilled): three bankd processes share
//     one cmd/embedmongo; one is SIGKILLed mid-load. Its clients fail over to the survivors
//     with the same keys, and the survivors' recovery finishes its stuck transfers.
//  3. Database faults (TestProcessFaults/DatabaseFaults): bankd against a cmd/embedmongo
//     whose failCommand fail point (restricted to bankd's appName) answers errors
//     (ShutdownInProgress, InterruptedAtShutdown), closes connections, or blocks commands for
//     200 ms while transfers run. Clients may only ever see 201, 422 insufficient_funds, 409
//     in flight or 503 with Retry-After: never a 500, never money lost or moved twice.
//     ShutdownErrorUnderReads narrows one case down: a shutdown error (11600) makes the
//     driver clear its connection pool, so concurrent operations fail with the driver's
//     pool-cleared error; bankd must answer those 503 too.
//  4. Clock skew (TestSkewedClockCannotTakeLiveLease): in-process, an instance whose clock
//     runs minutes ahead or behind cannot take an account lease another instance holds,
//     because lease expiry is judged by the database's $$NOW, not the contender's clock.
//
// The process tests are skipped under -short; FAULTTEST_LOGS=1 prints the tail of every
// child process's log even when the tests pass. Load is kept small (20 accounts, 8 clients,
// a few hundred transfers) so the package runs in well under two minutes on two busy cores;
// the process scenarios run concurrently because most of their time is spent waiting
// for leases to expire.
package faulttest
