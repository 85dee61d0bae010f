package app

import (
	"os"
	"runtime/debug"
)

// DefaultGCPercent is the garbage collector's target when GOGC is not set.
// bankd's heap is small next to the memory it runs in, and the engine and
// the driver allocate per request: collecting four times less often took
// the uniform load from 1,335 to 1,689 transfers/s (bankload -embedded,
// 64 clients, 10,000 accounts, one run each). GOGC and GOMEMLIMIT override it.
const DefaultGCPercent = 400

// TuneGC applies DefaultGCPercent unless the environment sets GOGC. Call it
// from main, before load arrives.
func TuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(DefaultGCPercent)
	}
}
