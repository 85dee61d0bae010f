// Command bankd is the banking transfer service.
//
//	bankd [serve] [flags]   serve the HTTP API (the default)
//	bankd audit [flags]     run the conservation audit; exit status 1 on any violation
//	bankd version           print the version
//
// Without MONGODB_URI (or --mongodb-uri) it runs the embedded engine on --data-dir.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/bankd/bankd/internal/app"
)

func main() {
	app.TuneGC()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		var ae auditFailed
		if !errors.As(err, &ae) {
			fmt.Fprintln(os.Stderr, "bankd:", err)
		}
		os.Exit(1)
	}
}

type auditFailed struct{ n int }

func (a auditFailed) Error() string { return fmt.Sprintf("audit found %d violations", a.n) }

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "version":
		fmt.Fprintln(stdout, "bankd", app.Version)
		return nil
	case "serve", "audit":
	default:
		return fmt.Errorf("unknown command %q (want serve, audit or version)", cmd)
	}
	cfg, err := app.ParseFlags("bankd "+cmd, args, getenv)
	if err != nil {
		return err
	}
	log := newLogger(stderr, cfg.LogLevel)
	if cmd == "audit" {
		return audit(ctx, cfg, log, stdout)
	}
	log.Info("starting bankd", cfg.LogValue()...)
	a, err := app.Start(ctx, cfg, log)
	if err != nil {
		return err
	}
	<-ctx.Done()
	log.Info("shutting down", "deadline", cfg.ShutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	if err := a.Close(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	log.Info("stopped cleanly")
	return nil
}

func audit(ctx context.Context, cfg app.Config, log *slog.Logger, stdout io.Writer) error {
	a, err := app.Open(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer a.Close(context.Background())
	report, err := a.Transactions().Audit(ctx)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(report); err != nil {
		return err
	}
	if !report.OK() {
		return auditFailed{len(report.Violations)}
	}
	return nil
}

func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l}))
}
