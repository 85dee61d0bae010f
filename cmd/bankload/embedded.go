package main

import (
	"context"
	"errors"
	"log/slog"
	"os"

	"github.com/bankd/bankd/internal/app"
)

// startEmbedded starts bankd in-process on a free loopback port with its
// data in a fresh temporary directory, and returns its base URL and a
// function that shuts it down and removes the data.
func startEmbedded(ctx context.Context, logger *slog.Logger, apiKey string) (string, func(), error) {
	dir, err := os.MkdirTemp("", "bankload-*")
	if err != nil {
		return "", nil, err
	}
	cfg := app.Defaults()
	cfg.Addr = "127.0.0.1:0"
	cfg.DataDir = dir
	if apiKey != "" {
		cfg.APIKeys = []string{apiKey}
	}
	a, err := app.Start(ctx, cfg, logger)
	if err != nil {
		return "", nil, errors.Join(err, os.RemoveAll(dir))
	}
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
		defer cancel()
		if err := a.Close(ctx); err != nil {
			logger.Error("stopping embedded bankd", "err", err)
		}
		_ = os.RemoveAll(dir)
	}
	return a.URL(), stop, nil
}
