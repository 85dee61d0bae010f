// Package app wires bankd together: the database (a MongoDB URI or the embedded engine), the
// domain services, the HTTP API, the recovery loop, and an orderly shutdown. cmd/bankd and
// bankload -embedded start it the same way.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/bankd/bankd/embedmongo"
	"github.com/bankd/bankd/httpapi"
	"github.com/bankd/bankd/idempotency"
	"github.com/bankd/bankd/lock"
	"github.com/bankd/bankd/transaction"
)

// Version is bankd's version, reported by `bankd version` and /healthz.
var Version = "0.1.0"

// App is a running bankd.
type App struct {
	cfg    Config
	log    *slog.Logger
	engine *embedmongo.Server // nil with MONGODB_URI
	client *mongo.Client
	db     *mongo.Database
	svc    *transaction.Service
	api    *httpapi.Handler
	srv    *http.Server
	ln     net.Listener

	stopRecovery context.CancelFunc
	wg           sync.WaitGroup
	closeOnce    sync.Once
	closeErr     error
}

// Open connects to the database (starting the embedded engine when no URI is given) and
// builds the services, without serving HTTP. `bankd audit` uses it directly.
func Open(ctx context.Context, cfg Config, log *slog.Logger) (*App, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.InstanceID == "" {
		cfg.InstanceID = uuid.NewString()
	}
	a := &App{cfg: cfg, log: log}
	uri := cfg.MongoURI
	if uri == "" {
		srv, err := embedmongo.Start(ctx, embedmongo.Options{Dir: cfg.DataDir, Logger: log.With("component", "embedmongo")})
		if err != nil {
			return nil, fmt.Errorf("start embedded engine: %w", err)
		}
		a.engine = srv
		uri = srv.URI()
		log.Info("using the embedded engine", "data_dir", cfg.DataDir)
	} else {
		log.Info("using MongoDB", "uri", maskURI(uri))
	}
	client, err := mongo.Connect(options.Client().ApplyURI(uri).
		SetServerSelectionTimeout(5 * time.Second).
		SetConnectTimeout(5 * time.Second).
		SetMaxPoolSize(256).
		SetAppName("bankd"))
	if err != nil {
		a.closeDB()
		return nil, fmt.Errorf("connect: %w", err)
	}
	a.client = client
	a.db = client.Database(cfg.Database)
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := client.Ping(pingCtx, nil); err != nil {
		a.closeDB()
		return nil, fmt.Errorf("database unreachable: %w", err)
	}
	metrics := httpapi.NewMetrics()
	a.svc, err = transaction.New(a.db, transaction.Config{
		Lock: lock.Config{
			Owner:         cfg.InstanceID,
			LeaseDuration: cfg.LeaseDuration,
			WaitTimeout:   cfg.LockWait,
			MaxHold:       cfg.MaxHold,
			Observe:       metrics.ObserveLease,
		},
		OnRecovered: metrics.ObserveRecovered,
		Logger:      log.With("component", "recovery"),
	})
	if err != nil {
		a.closeDB()
		return nil, err
	}
	// A key in flight is leased like an account: if its instance dies, a retry may take it over
	// after one lease duration (re-running the request finds the same transfer, so this is safe).
	keys := idempotency.New(a.db, idempotency.Config{Owner: cfg.InstanceID, TTL: cfg.IdempotencyTTL, LeaseDuration: cfg.LeaseDuration})
	if err := a.svc.EnsureIndexes(ctx); err != nil {
		a.closeDB()
		return nil, fmt.Errorf("create indexes: %w", err)
	}
	if err := keys.EnsureIndexes(ctx); err != nil {
		a.closeDB()
		return nil, fmt.Errorf("create indexes: %w", err)
	}
	a.api = httpapi.New(httpapi.Config{
		APIKeys:      cfg.APIKeys,
		MaxBodyBytes: cfg.MaxBodyBytes,
		Logger:       log.With("component", "http"),
		Version:      Version,
	}, httpapi.Deps{
		Transfers: a.svc,
		Accounts:  a.svc.Accounts(),
		Keys:      keys,
		Ping:      func(ctx context.Context) error { return client.Ping(ctx, nil) },
		Metrics:   metrics,
	})
	a.startRecovery(keys)
	return a, nil
}

// Start opens bankd and serves its API on cfg.Addr (port 0 picks a free one; see URL).
func Start(ctx context.Context, cfg Config, log *slog.Logger) (*App, error) {
	a, err := Open(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", cfg.Addr)
	if err != nil {
		_ = a.Close(context.Background())
		return nil, fmt.Errorf("listen: %w", err)
	}
	a.ln = ln
	a.srv = &http.Server{
		Handler:           a.api,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		if err := a.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Error("HTTP server stopped", "err", err)
		}
	}()
	a.log.Info("bankd listening", "url", a.URL(), "version", Version, "instance", cfg.InstanceID)
	return a, nil
}

func (a *App) startRecovery(keys *idempotency.Store) {
	ctx, cancel := context.WithCancel(context.Background())
	a.stopRecovery = cancel
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		a.svc.RunRecovery(ctx, a.cfg.RecoveryInterval, func(ctx context.Context) error {
			_, err := keys.Settle(ctx, a.api.Replay)
			return err
		})
	}()
}

// URL is the base URL of the API.
func (a *App) URL() string { return "http://" + a.ln.Addr().String() }

// Transactions exposes the transfer service (audit, tests).
func (a *App) Transactions() *transaction.Service { return a.svc }

// Handler exposes the HTTP API handler (tests).
func (a *App) Handler() http.Handler { return a.api }

// Close shuts down in order: stop accepting and let in-flight requests finish (they release
// their leases) within ctx's deadline, stop recovery, then close the database and the engine.
func (a *App) Close(ctx context.Context) error {
	a.closeOnce.Do(func() {
		var errs []error
		if a.srv != nil {
			if err := a.srv.Shutdown(ctx); err != nil {
				errs = append(errs, fmt.Errorf("http shutdown: %w", err))
			}
		}
		if a.stopRecovery != nil {
			a.stopRecovery()
		}
		a.wg.Wait()
		if err := a.closeDB(); err != nil {
			errs = append(errs, err)
		}
		a.closeErr = errors.Join(errs...)
	})
	return a.closeErr
}

func (a *App) closeDB() error {
	var errs []error
	if a.client != nil {
		if err := a.client.Disconnect(context.Background()); err != nil {
			errs = append(errs, fmt.Errorf("disconnect: %w", err))
		}
	}
	if a.engine != nil {
		if err := a.engine.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close engine: %w", err))
		}
	}
	return errors.Join(errs...)
}
