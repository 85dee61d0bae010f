package testmongo

import (
	"runtime"
	"strings"
	"time"
)

// leakedGoroutines waits up to grace for goroutines running bankd or driver
// code to end, and returns the stacks of those still running. The engine's
// own goroutines are its business, not the tests'.
func leakedGoroutines(grace time.Duration) string {
	deadline := time.Now().Add(grace)
	for {
		leaks := suspects()
		if leaks == "" || time.Now().After(deadline) {
			return leaks
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func suspects() string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		switch {
		case strings.Contains(g, "testmongo.Main"), strings.Contains(g, "testmongo.suspects"):
		case strings.Contains(g, "github.com/bankd/bankd/embedmongo"):
		case strings.Contains(g, "github.com/bankd/bankd/"), strings.Contains(g, "go.mongodb.org/mongo-driver"):
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}
