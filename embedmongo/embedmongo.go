// Package embedmongo is an embedded, MongoDB-wire-compatible database engine.
package embedmongo

import (
	"context"
	"errors"
	"log/slog"
	"time"
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
type Server struct{}

// Start opens the storage and starts listening.
func Start(ctx context.Context, opts Options) (*Server, error) {
	return nil, errors.New("embedmongo: not implemented yet")
}

// URI returns a connection string for the official driver.
func (s *Server) URI() string { return "" }

// Addr returns the address the server listens on.
func (s *Server) Addr() string { return "" }

// Close stops listening, closes connections and the storage.
func (s *Server) Close() error { return nil }
