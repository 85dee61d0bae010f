// Package bench holds bankd's benchmarks beside the baselines they are judged
// against, all on the same embedded engine with a data directory (durable
// writes, as bankd runs):
//
//   - BenchmarkFailFast: the classic design's lock, acquired once with
//     findOneAndUpdate({_id, locked: false}) and answered "locked" on
//     contention; its success rate is the point.
//   - BenchmarkConditionalInc: lock-free transfers, a conditional $inc debit
//     then an $inc credit, no journal, no leases: the throughput ceiling.
//   - BenchmarkServiceTransfer: bankd's transaction.Service in-process (no
//     HTTP), leases and journal included.
//
// Each runs "hot" (2 accounts) and "uniform" (10,000 accounts) with 64
// concurrent clients. scripts/bench.sh runs them beside bankd over HTTP and
// PostgreSQL's pgbench; RESULTS.md records a run.
package bench
