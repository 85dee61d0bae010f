package spectest

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// DefaultDir is where the shared specification tests live, relative to the project root.
const DefaultDir = "../shared/mongo-spec/crud"

// EnvDir names the environment variable that overrides DefaultDir.
const EnvDir = "MONGO_SPEC_DIR"

// ResolveDir returns dir, else $MONGO_SPEC_DIR, else DefaultDir.
func ResolveDir(dir string) string {
	if dir != "" {
		return dir
	}
	if env := os.Getenv(EnvDir); env != "" {
		return env
	}
	return DefaultDir
}

// Summary counts test results.
type Summary struct {
	Passed, Failed, Skipped int
}

func (s *Summary) add(st Status) {
	switch st {
	case Passed:
		s.Passed++
	case Failed:
		s.Failed++
	case Skipped:
		s.Skipped++
	}
}

// Line is the final report line.
func (s Summary) Line() string {
	return fmt.Sprintf("specrun: %d passed, %d failed, %d skipped", s.Passed, s.Failed, s.Skipped)
}

// TestID names a test for selection: "<file without .json>/<description>".
func TestID(f *File, t *Test) string {
	return strings.TrimSuffix(f.Name(), filepath.Ext(f.Name())) + "/" + t.Description
}

// Selected reports whether run (nil: everything) selects test t of file f. The pattern is
// matched against "file/description", with or without the file's ".json".
func Selected(run *regexp.Regexp, f *File, t *Test) bool {
	return run == nil || run.MatchString(TestID(f, t)) || run.MatchString(f.Name()+"/"+t.Description)
}

// SuiteOptions configures RunSuite.
type SuiteOptions struct {
	Dir     string
	Run     *regexp.Regexp
	Verbose bool
	Out     io.Writer
}

// RunSuite runs every selected test of every file in opts.Dir and writes one line per file
// (failures indented below it) and the summary line last.
func (r *Runner) RunSuite(ctx context.Context, opts SuiteOptions) (Summary, error) {
	var sum Summary
	skipReasons := map[string]int{}
	out := opts.Out
	if out == nil {
		out = os.Stdout
	}
	paths, err := ListFiles(opts.Dir)
	if err != nil {
		return sum, err
	}
	if len(paths) == 0 {
		return sum, fmt.Errorf("no .json test files in %s", opts.Dir)
	}
	if opts.Verbose {
		fmt.Fprintf(out, "server: %s; tests: %s\n", r.info, opts.Dir)
	}
	for _, p := range paths {
		f, err := LoadFile(p)
		if err != nil {
			// An unreadable file fails loudly rather than silently dropping its tests.
			sum.Failed++
			fmt.Fprintf(out, "%s: 0 passed, 1 failed, 0 skipped\n    %v\n", filepath.Base(p), err)
			continue
		}
		var fs Summary
		var details []string
		selected := 0
		for i := range f.Tests {
			t := &f.Tests[i]
			if !Selected(opts.Run, f, t) {
				continue
			}
			selected++
			res := r.RunTest(ctx, f, t)
			fs.add(res.Status)
			if res.Status == Skipped {
				skipReasons[res.Reason]++
			}
			switch {
			case res.Status == Failed:
				details = append(details, fmt.Sprintf("FAIL %q: %s", t.Description, res.Reason))
			case res.Status == Skipped && opts.Verbose:
				details = append(details, fmt.Sprintf("skip %q: %s", t.Description, res.Reason))
			case res.Status == Passed && opts.Verbose:
				details = append(details, fmt.Sprintf("ok   %q", t.Description))
			}
		}
		if selected == 0 {
			continue
		}
		sum.Passed += fs.Passed
		sum.Failed += fs.Failed
		sum.Skipped += fs.Skipped
		fmt.Fprintf(out, "%s: %d passed, %d failed, %d skipped\n", f.Name(), fs.Passed, fs.Failed, fs.Skipped)
		for _, d := range details {
			fmt.Fprintln(out, indent(d, "    "))
		}
	}
	if len(skipReasons) > 0 {
		fmt.Fprintln(out, "skipped tests by reason:")
		for _, why := range slices.Sorted(maps.Keys(skipReasons)) {
			fmt.Fprintf(out, "    %3d  %s\n", skipReasons[why], why)
		}
	}
	fmt.Fprintln(out, sum.Line())
	return sum, nil
}

// indent prefixes every line of a (possibly multi-line) failure message.
func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix+"  ")
}
