package app

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// Config is bankd's configuration: flags, each with a BANKD_* environment variable (or
// MONGODB_URI) as its default.
type Config struct {
	Addr             string        // --addr, BANKD_ADDR
	MongoURI         string        // --mongodb-uri, MONGODB_URI; empty: embedded engine
	DataDir          string        // --data-dir, BANKD_DATA_DIR (embedded engine only)
	Database         string        // --database, BANKD_DATABASE
	APIKeys          []string      // BANKD_API_KEYS (comma-separated) or --api-keys-file
	LeaseDuration    time.Duration // --lease-duration, BANKD_LEASE_DURATION
	LockWait         time.Duration // --lock-wait, BANKD_LOCK_WAIT
	MaxHold          time.Duration // --max-hold, BANKD_MAX_HOLD
	IdempotencyTTL   time.Duration // --idempotency-ttl, BANKD_IDEMPOTENCY_TTL
	RecoveryInterval time.Duration // --recovery-interval, BANKD_RECOVERY_INTERVAL
	ShutdownTimeout  time.Duration // --shutdown-timeout, BANKD_SHUTDOWN_TIMEOUT
	MaxBodyBytes     int64         // --max-body-bytes, BANKD_MAX_BODY_BYTES
	LogLevel         string        // --log-level, BANKD_LOG_LEVEL
	// InstanceID names this instance in leases; default a random UUID.
	InstanceID string // --instance-id, BANKD_INSTANCE_ID
}

// Defaults returns the configuration used when nothing is set.
func Defaults() Config {
	return Config{
		Addr:             "127.0.0.1:8080",
		DataDir:          "./data",
		Database:         "bankd",
		LeaseDuration:    10 * time.Second,
		LockWait:         5 * time.Second,
		MaxHold:          50 * time.Millisecond,
		IdempotencyTTL:   24 * time.Hour,
		RecoveryInterval: 2 * time.Second,
		ShutdownTimeout:  15 * time.Second,
		MaxBodyBytes:     64 << 10,
		LogLevel:         "info",
	}
}

// ParseFlags reads the configuration from args, with the environment as defaults.
func ParseFlags(name string, args []string, getenv func(string) string) (Config, error) {
	c := Defaults()
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	env := func(k, def string) string {
		if v := getenv(k); v != "" {
			return v
		}
		return def
	}
	var errs []error
	envDur := func(k string, def time.Duration) time.Duration {
		v := getenv(k)
		if v == "" {
			return def
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", k, err))
			return def
		}
		return d
	}
	fs.StringVar(&c.Addr, "addr", env("BANKD_ADDR", c.Addr), "HTTP listen address")
	fs.StringVar(&c.MongoURI, "mongodb-uri", env("MONGODB_URI", ""), "MongoDB connection string (empty: the embedded engine)")
	fs.StringVar(&c.DataDir, "data-dir", env("BANKD_DATA_DIR", c.DataDir), "data directory of the embedded engine")
	fs.StringVar(&c.Database, "database", env("BANKD_DATABASE", c.Database), "database name")
	keysFile := fs.String("api-keys-file", env("BANKD_API_KEYS_FILE", ""), "file with one API key per line")
	fs.DurationVar(&c.LeaseDuration, "lease-duration", envDur("BANKD_LEASE_DURATION", c.LeaseDuration), "account lease duration")
	fs.DurationVar(&c.LockWait, "lock-wait", envDur("BANKD_LOCK_WAIT", c.LockWait), "how long a transfer waits for its account leases")
	fs.DurationVar(&c.MaxHold, "max-hold", envDur("BANKD_MAX_HOLD", c.MaxHold), "how long a lease may be handed between local transfers of a hot account (0: off)")
	fs.DurationVar(&c.IdempotencyTTL, "idempotency-ttl", envDur("BANKD_IDEMPOTENCY_TTL", c.IdempotencyTTL), "how long idempotency keys are kept")
	fs.DurationVar(&c.RecoveryInterval, "recovery-interval", envDur("BANKD_RECOVERY_INTERVAL", c.RecoveryInterval), "how often recovery looks for stalled transfers")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", envDur("BANKD_SHUTDOWN_TIMEOUT", c.ShutdownTimeout), "how long shutdown waits for in-flight requests")
	maxBody := fs.Int64("max-body-bytes", c.MaxBodyBytes, "request body limit in bytes")
	fs.StringVar(&c.LogLevel, "log-level", env("BANKD_LOG_LEVEL", c.LogLevel), "debug, info, warn or error")
	fs.StringVar(&c.InstanceID, "instance-id", env("BANKD_INSTANCE_ID", ""), "this instance's lease owner id (default: random)")
	if v := getenv("BANKD_MAX_BODY_BYTES"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			errs = append(errs, fmt.Errorf("BANKD_MAX_BODY_BYTES: %w", err))
		}
		*maxBody = n
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	c.MaxBodyBytes = *maxBody
	if v := getenv("BANKD_API_KEYS"); v != "" {
		c.APIKeys = splitKeys(strings.Split(v, ","))
	}
	if *keysFile != "" {
		b, err := os.ReadFile(*keysFile)
		if err != nil {
			return c, fmt.Errorf("api keys file: %w", err)
		}
		c.APIKeys = append(c.APIKeys, splitKeys(strings.Split(string(b), "\n"))...)
	}
	if len(errs) > 0 {
		return c, errors.Join(errs...)
	}
	return c, c.Validate()
}

func splitKeys(parts []string) []string {
	var out []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Validate checks the configuration, including the rule that an unauthenticated API may
// only listen on loopback.
func (c Config) Validate() error {
	host, _, err := net.SplitHostPort(c.Addr)
	if err != nil {
		return fmt.Errorf("addr %q: %w", c.Addr, err)
	}
	if len(c.APIKeys) == 0 && !isLoopback(host) {
		return fmt.Errorf("refusing to listen on %s without API keys: set BANKD_API_KEYS or --api-keys-file, or listen on 127.0.0.1", c.Addr)
	}
	switch {
	case c.LeaseDuration < 100*time.Millisecond:
		return fmt.Errorf("lease duration %v is too short", c.LeaseDuration)
	case c.LockWait <= 0:
		return fmt.Errorf("lock wait must be positive")
	case c.MaxHold < 0 || c.MaxHold > c.LeaseDuration/2:
		return fmt.Errorf("max hold %v must be between 0 and half the lease duration", c.MaxHold)
	case c.MaxBodyBytes < 1024:
		return fmt.Errorf("max body bytes %d is too small", c.MaxBodyBytes)
	case c.Database == "":
		return fmt.Errorf("database name is empty")
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// LogValue lists the configuration for the start-up log with secrets masked.
func (c Config) LogValue() []any {
	return []any{
		"addr", c.Addr, "mongodb_uri", maskURI(c.MongoURI), "data_dir", c.DataDir, "database", c.Database,
		"api_keys", fmt.Sprintf("%d configured", len(c.APIKeys)), "lease_duration", c.LeaseDuration,
		"lock_wait", c.LockWait, "max_hold", c.MaxHold, "idempotency_ttl", c.IdempotencyTTL,
		"recovery_interval", c.RecoveryInterval, "shutdown_timeout", c.ShutdownTimeout,
		"max_body_bytes", c.MaxBodyBytes, "log_level", c.LogLevel,
	}
}

// maskURI hides the password of a connection string.
func maskURI(uri string) string {
	if uri == "" {
		return "(embedded engine)"
	}
	u, err := url.Parse(uri)
	if err != nil {
		return "(unparseable, hidden)"
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
	}
	return u.String()
}
