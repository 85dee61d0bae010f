// Command specrun runs MongoDB's unified-format CRUD specification tests against a fresh
// in-memory embedmongo, or against any server given with -uri (e.g. a real mongod, to compare).
//
//	go run ./cmd/specrun [-dir DIR] [-uri URI] [-run REGEXP] [-v]
//
// The last line of its output is "specrun: N passed, N failed, N skipped"; it exits with
// status 1 when a test failed and 2 when the run could not start.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"regexp"

	"github.com/bankd/bankd/embedmongo"
	"github.com/bankd/bankd/embedmongo/spectest"
)

func main() {
	os.Exit(run())
}

func run() int {
	dir := flag.String("dir", "", "test directory (default $"+spectest.EnvDir+", then "+spectest.DefaultDir+")")
	uri := flag.String("uri", "", "server to test (default: start an in-memory embedmongo)")
	runPattern := flag.String("run", "", "only run tests whose \"file/description\" matches this regexp")
	verbose := flag.Bool("v", false, "list every test and the server description")
	flag.Parse()

	opts := spectest.SuiteOptions{Dir: spectest.ResolveDir(*dir), Verbose: *verbose, Out: os.Stdout}
	if *runPattern != "" {
		re, err := regexp.Compile(*runPattern)
		if err != nil {
			fmt.Fprintln(os.Stderr, "specrun: -run:", err)
			return 2
		}
		opts.Run = re
	}
	if _, err := os.Stat(opts.Dir); err != nil {
		fmt.Fprintln(os.Stderr, "specrun: test directory:", err)
		return 2
	}

	ctx := context.Background()
	target := *uri
	if target == "" {
		srv, err := embedmongo.Start(ctx, embedmongo.Options{})
		if err != nil {
			fmt.Fprintln(os.Stderr, "specrun: start embedmongo:", err)
			return 2
		}
		defer srv.Close()
		target = srv.URI()
	}

	runner, err := spectest.NewRunner(ctx, target)
	if err != nil {
		fmt.Fprintln(os.Stderr, "specrun: connect:", err)
		return 2
	}
	defer runner.Close(ctx)

	sum, err := runner.RunSuite(ctx, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "specrun:", err)
		return 2
	}
	if sum.Failed > 0 {
		return 1
	}
	return 0
}
