package spectest_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/bankd/bankd/embedmongo"
	"github.com/bankd/bankd/embedmongo/spectest"
)

// specDir finds the shared test folder: $MONGO_SPEC_DIR, else DefaultDir relative to the
// module root (the directory holding go.mod), since tests run in the package directory.
func specDir(t *testing.T) string {
	if env := os.Getenv(spectest.EnvDir); env != "" {
		return env
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, spectest.DefaultDir)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return spectest.DefaultDir
		}
		dir = parent
	}
}

// TestSpec runs the unified-format CRUD tests against a fresh in-memory engine (or against
// $MONGO_SPEC_URI), one subtest per file and test.
func TestSpec(t *testing.T) {
	dir := specDir(t)
	paths, err := spectest.ListFiles(dir)
	if err != nil || len(paths) == 0 {
		t.Skipf("no specification tests at %s (set $%s to run them): %v", dir, spectest.EnvDir, err)
	}
	ctx := context.Background()
	uri := os.Getenv("MONGO_SPEC_URI")
	if uri == "" {
		srv, err := embedmongo.Start(ctx, embedmongo.Options{})
		if err != nil {
			t.Fatalf("start embedmongo: %v", err)
		}
		t.Cleanup(func() { _ = srv.Close() })
		uri = srv.URI()
	}
	runner, err := spectest.NewRunner(ctx, uri)
	if err != nil {
		t.Fatalf("connect to %s: %v", uri, err)
	}
	t.Cleanup(func() { _ = runner.Close(context.Background()) })
	t.Logf("server %s, tests from %s", runner.Info(), dir)

	var sum spectest.Summary
	for _, p := range paths {
		f, err := spectest.LoadFile(p)
		if err != nil {
			t.Errorf("%v", err)
			sum.Failed++
			continue
		}
		t.Run(f.Name(), func(t *testing.T) {
			for i := range f.Tests {
				test := &f.Tests[i]
				t.Run(test.Description, func(t *testing.T) {
					res := runner.RunTest(ctx, f, test)
					switch res.Status {
					case spectest.Skipped:
						sum.Skipped++
						t.Skip(res.Reason)
					case spectest.Failed:
						sum.Failed++
						t.Error(res.Reason)
					default:
						sum.Passed++
					}
				})
			}
		})
	}
	t.Log(sum.Line())
}
