// Command embedmongo runs the embedded MongoDB-compatible engine as a standalone server, so
// several bankd processes (or any MongoDB client) can share one engine.
//
//	embedmongo --dir ./data --addr 127.0.0.1:27017
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/bankd/bankd/embedmongo"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "embedmongo:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("embedmongo", flag.ContinueOnError)
	dir := fs.String("dir", "", "data directory (empty: in memory, lost on exit)")
	addr := fs.String("addr", "127.0.0.1:27017", "address to listen on")
	ttl := fs.Duration("ttl-monitor-period", 60*time.Second, "how often TTL indexes are enforced")
	verbose := fs.Bool("v", false, "debug logging")
	if err := fs.Parse(args); err != nil {
		return err
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv, err := embedmongo.Start(ctx, embedmongo.Options{Dir: *dir, Addr: *addr, Logger: log, TTLMonitorPeriod: *ttl})
	if err != nil {
		return err
	}
	log.Info("ready", "uri", srv.URI())
	<-ctx.Done()
	log.Info("shutting down")
	if err := srv.Close(); err != nil {
		return fmt.Errorf("close: %w", err)
	}
	log.Info("stopped cleanly")
	return nil
}
