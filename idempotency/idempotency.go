package idempotency

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/bankd/bankd/lock"
)

// Sentinel errors; match them with errors.Is.
var (
	// ErrKeyMismatch: the key was used before with a different request (HTTP 422).
	ErrKeyMismatch = errors.New("idempotency key reused with a different request")
	// ErrInFlight: the first request with this key is still being processed (HTTP 409).
	ErrInFlight = errors.New("idempotency key in use by a request in flight")
	// ErrInvalidKey: the key is empty, too long or not printable (HTTP 400).
	ErrInvalidKey = errors.New("invalid idempotency key")
	// ErrLeaseLost: the record was taken over by another instance after this
	// one's lease on it expired; the other one will settle it.
	ErrLeaseLost = lock.ErrLeaseLost
)

// MaxKeyLen is the longest key accepted, in bytes.
const MaxKeyLen = 255

// ValidateKey checks a client's key: 1 to 255 printable ASCII characters.
func ValidateKey(key string) error {
	if len(key) == 0 || len(key) > MaxKeyLen {
		return fmt.Errorf("%w: length must be 1 to %d", ErrInvalidKey, MaxKeyLen)
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x20 || key[i] > 0x7e {
			return fmt.Errorf("%w: byte %d is not printable ASCII", ErrInvalidKey, i)
		}
	}
	return nil
}

// Fingerprint is the hex SHA-256 of the parts of a canonical request (e.g.
// method, path, canonical JSON body), each length-prefixed so that moving
// bytes from one part to the next changes the fingerprint.
func Fingerprint(parts ...[]byte) string {
	h := sha256.New()
	var n [8]byte
	for _, p := range parts {
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// State of a record.
type State string

// Record states.
const (
	StateInFlight State = "in_flight"
	StateDone     State = "done"
)

// Outcome is what the first request answered, replayed to every retry.
type Outcome struct {
	Status int    `bson:"status"`
	Body   []byte `bson:"body,omitempty"`
}

// Record is the memory of one (scope, key).
type Record struct {
	ID          string `bson:"_id"` // recordID(scope, key)
	Scope       string `bson:"scope"`
	Key         string `bson:"key"`
	Fingerprint string `bson:"fingerprint"`
	State       State  `bson:"state"`
	// ResourceID is fixed when the record is created and kept across
	// take-overs: the caller derives the id of what it creates from it (the
	// transfer id), so a re-run finds the work of the run before.
	ResourceID string `bson:"resourceId"`
	// Request is the canonical request, kept so that Settle can re-run it.
	Request   []byte    `bson:"request,omitempty"`
	Outcome   *Outcome  `bson:"outcome,omitempty"`
	CreatedAt time.Time `bson:"createdAt"`
	ExpiresAt time.Time `bson:"expiresAt"`

	Owner string `bson:"lockOwner,omitempty"`
	Token int64  `bson:"fencingToken"`

	// Replay is set by Begin when the record is done: answer Outcome again.
	Replay bool `bson:"-"`
	// TakenOver is set by Begin when a crashed owner's record was taken over.
	TakenOver bool `bson:"-"`
}

// Validate checks the record's invariants.
func (r *Record) Validate() error {
	if err := ValidateKey(r.Key); err != nil {
		return err
	}
	switch {
	case r.ID != recordID(r.Scope, r.Key):
		return fmt.Errorf("idempotency: record id does not match scope and key")
	case len(r.Fingerprint) != 2*sha256.Size:
		return fmt.Errorf("idempotency: fingerprint must be a hex SHA-256")
	case r.State == StateDone && r.Outcome == nil:
		return fmt.Errorf("idempotency: done without an outcome")
	case r.State != StateDone && r.State != StateInFlight:
		return fmt.Errorf("idempotency: state %q", r.State)
	}
	return nil
}

// recordID names the record of (scope, key) in one indexed string.
func recordID(scope, key string) string { return Fingerprint([]byte(scope), []byte(key)) }

// Begin is what a request brings to Store.Begin.
type Begin struct {
	Scope       string // e.g. the API key's id: keys of different clients never collide
	Key         string
	Fingerprint string // Fingerprint of the canonical request
	Request     []byte // optional: the canonical request, for Settle
}

// Config tunes a Store. Zero values select defaults.
type Config struct {
	// Owner identifies this instance in leases; default a random UUID.
	Owner string
	// TTL is how long records are kept; default 24 h.
	TTL time.Duration
	// LeaseDuration is how long an in-flight record stays this instance's
	// before another may take it over; default 30 s.
	LeaseDuration time.Duration
	// SettleGrace is how old an in-flight record without a live lease must
	// be before Settle takes it; default LeaseDuration.
	SettleGrace time.Duration
	// Now is the local clock for createdAt/expiresAt; default time.Now.
	Now func() time.Time
}

func (c Config) withDefaults() Config {
	if c.Owner == "" {
		c.Owner = uuid.NewString()
	}
	if c.TTL <= 0 {
		c.TTL = 24 * time.Hour
	}
	if c.LeaseDuration <= 0 {
		c.LeaseDuration = 30 * time.Second
	}
	if c.SettleGrace <= 0 {
		c.SettleGrace = c.LeaseDuration
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}
