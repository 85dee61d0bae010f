// Package embedmongo is an embedded, MongoDB-wire-compatible database engine: the official Go
// driver talks to it over loopback exactly as it talks to mongod, so code tested against it runs
// unchanged against a real MongoDB.
//
// Layers (outer to inner): server.go accepts connections and reads wire messages
// (internal/wire); dispatch.go routes each command to its cmd_*.go file through an alphabetical
// command table; the commands use the query, update, agg and expr packages for MongoDB's
// languages and internal/storage for collections, indexes and durability.
//
// It presents itself as a standalone MongoDB 7.0 (maxWireVersion 21). Replication, sharding,
// transactions, authentication and change streams are out of scope.
package embedmongo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bankd/bankd/embedmongo/internal/storage"
)

// Limits the engine advertises in hello and enforces.
const (
	MaxBSONObjectSize   = 16 * 1024 * 1024
	MaxMessageSizeBytes = 48_000_000
	MaxWriteBatchSize   = 100_000
	MaxWireVersion      = 21
	Version             = "7.0.0"
)

// Options configures an engine.
type Options struct {
	// Dir is the data directory; "" keeps all data in memory.
	Dir string
	// Addr is the TCP address to listen on; "" means "127.0.0.1:0" (a free port).
	Addr string
	// Logger receives connection and lifecycle logs; nil discards them.
	Logger *slog.Logger
	// TTLMonitorPeriod is how often expired documents are removed (mongod's default: 60 s).
	TTLMonitorPeriod time.Duration
}

// Server is a running engine.
type Server struct {
	opts     Options
	log      *slog.Logger
	ln       net.Listener
	store    *storage.Store
	cursors  *cursorTable
	sessions *sessionCache
	fail     *failPoints
	started  time.Time

	connID    atomic.Int64
	requestID atomic.Int32
	totalConn atomic.Int64

	mu     sync.Mutex
	conns  map[*conn]struct{}
	closed bool
	done   chan struct{}
	wg     sync.WaitGroup
}

// Start opens the storage and starts listening.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	if opts.TTLMonitorPeriod <= 0 {
		opts.TTLMonitorPeriod = 60 * time.Second
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	store, err := storage.Open(storage.Options{Dir: opts.Dir})
	if err != nil {
		return nil, fmt.Errorf("embedmongo: open storage: %w", err)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", opts.Addr)
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("embedmongo: listen: %w", err)
	}
	s := &Server{
		opts:     opts,
		log:      log,
		ln:       ln,
		store:    store,
		cursors:  newCursorTable(),
		sessions: newSessionCache(),
		fail:     &failPoints{},
		started:  time.Now(),
		conns:    make(map[*conn]struct{}),
		done:     make(chan struct{}),
	}
	s.wg.Add(2)
	go s.acceptLoop()
	go s.background()
	log.Info("embedmongo listening", "addr", ln.Addr().String(), "dir", opts.Dir, "durable", opts.Dir != "")
	return s, nil
}

// URI returns a connection string for the official driver.
func (s *Server) URI() string {
	return "mongodb://" + s.Addr() + "/?directConnection=true"
}

// Addr returns the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops listening, closes connections and the storage.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.done)
	for c := range s.conns {
		c.nc.Close()
	}
	s.mu.Unlock()
	s.ln.Close()
	s.wg.Wait()
	return s.store.Close()
}

func (s *Server) acceptLoop() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			s.log.Warn("accept failed", "err", err)
			select {
			case <-s.done:
				return
			case <-time.After(10 * time.Millisecond):
			}
			continue
		}
		c := &conn{srv: s, nc: nc, id: s.connID.Add(1)}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			nc.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		s.totalConn.Add(1)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			c.serve()
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
		}()
	}
}

// background runs the TTL monitor and reaps idle cursors.
func (s *Server) background() {
	defer s.wg.Done()
	ttl := time.NewTicker(s.opts.TTLMonitorPeriod)
	defer ttl.Stop()
	reap := time.NewTicker(time.Minute)
	defer reap.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-ttl.C:
			if n, err := s.store.ExpireTTL(time.Now()); err != nil {
				s.log.Warn("TTL monitor failed", "err", err)
			} else if n > 0 {
				s.log.Debug("TTL monitor removed documents", "n", n)
			}
		case <-reap.C:
			s.cursors.reap(time.Now().Add(-cursorIdleTimeout))
			s.sessions.reap(time.Now().Add(-sessionTimeout))
		}
	}
}

func (s *Server) connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}
