package lock

import (
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// Sentinel errors; match them with errors.Is.
var (
	// ErrTimeout: the lease could not be had before the wait deadline
	// (another holder kept it). The HTTP layer answers 503 account_busy.
	ErrTimeout = errors.New("lock: timed out waiting for lease")
	// ErrHeld: TryAcquire found the lease held by someone else.
	ErrHeld = errors.New("lock: lease held by another owner")
	// ErrLeaseLost: the lease expired and another owner took it, so a write
	// fenced with it was refused. Nothing was written.
	ErrLeaseLost = errors.New("lock: lease lost")
	// ErrNotFound: the document to lease does not exist.
	ErrNotFound = errors.New("lock: document not found")
)

// Field names of the lease on a leased document. Writes made under a lease
// filter on FieldOwner and FieldToken (see Lease.Fence).
const (
	FieldOwner     = "lockOwner"
	FieldTimestamp = "lockTimestamp" // database clock at acquisition or renewal
	FieldDuration  = "lockDuration"  // milliseconds, int64
	FieldToken     = "fencingToken"  // int64, +1 on every acquisition, never reset
	// FieldAcquisition names the command that took the lease, set by
	// AcquireMany only (removed by every other acquisition and by release).
	FieldAcquisition = "lockAcquisition"
)

// Config tunes a Locker. The zero value of each field selects its default.
type Config struct {
	// Owner identifies this holder (one per bankd instance); default: a random UUID.
	Owner string
	// LeaseDuration is how long a lease lives without renewal, judged by the
	// database clock. Default 10 s.
	LeaseDuration time.Duration
	// WaitTimeout bounds how long Acquire waits, local queue included. Default 5 s.
	WaitTimeout time.Duration
	// MinBackoff and MaxBackoff bound the jittered exponential backoff between
	// polls of the database while another owner holds the lease. Defaults 2 ms, 100 ms.
	MinBackoff, MaxBackoff time.Duration
	// MaxHold, when positive, lets Release hand a lease straight to the next
	// goroutine of this process queued for the same document instead of
	// releasing it in the database, as long as the lease was acquired less
	// than MaxHold ago. It must be at most LeaseDuration/2. Default 0 (off).
	MaxHold time.Duration
	// Now is the local clock, used only for wait deadlines and hold bounds,
	// never for lease expiry. Default time.Now.
	Now func() time.Time
	// Observe, if set, is told the outcome of every Acquire and AcquirePair leg
	// (for metrics: wait time, failures) and of every lease found lost.
	Observe func(Event)
}

// Event reports one lease outcome to Config.Observe.
type Event struct {
	Collection string // the leased documents' collection ("accounts", "transfers")
	Key        string
	Wait       time.Duration // time spent acquiring (zero for Lost events)
	Err        error         // nil on success; ErrTimeout, ErrLeaseLost, ...
	Lost       bool          // a fenced write or renewal found the lease lost
}

func (c Config) withDefaults() (Config, error) {
	if c.Owner == "" {
		c.Owner = uuid.NewString()
	}
	if c.LeaseDuration <= 0 {
		c.LeaseDuration = 10 * time.Second
	}
	if c.WaitTimeout <= 0 {
		c.WaitTimeout = 5 * time.Second
	}
	if c.MinBackoff <= 0 {
		c.MinBackoff = 2 * time.Millisecond
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = 100 * time.Millisecond
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.MaxBackoff < c.MinBackoff {
		return c, fmt.Errorf("lock: MaxBackoff %v < MinBackoff %v", c.MaxBackoff, c.MinBackoff)
	}
	if c.MaxHold > c.LeaseDuration/2 {
		return c, fmt.Errorf("lock: MaxHold %v exceeds half the lease duration %v", c.MaxHold, c.LeaseDuration)
	}
	if c.LeaseDuration < time.Millisecond {
		return c, fmt.Errorf("lock: LeaseDuration %v below the database clock's millisecond resolution", c.LeaseDuration)
	}
	return c, nil
}

// Lease is a held lease on one document. It is owned by one goroutine at a time.
type Lease struct {
	// Key is the leased document's _id.
	Key string
	// Owner and Token identify this holding; every write under the lease
	// filters on both (Fence), so a stale holder's writes match nothing.
	Owner string
	Token int64
	// Since is the database clock's time of acquisition or last renewal
	// (zero after AcquireOrInsert, which cannot read it back).
	Since time.Time
	// Duration is the lease's lifetime from Since.
	Duration time.Duration
	// Doc is the leased document as of acquisition. After a hand-off
	// (Config.MaxHold) it may predate the previous holder's writes: use it for
	// slowly changing fields (status, currency), never for balances.
	Doc bson.Raw
	// Created reports that AcquireOrInsert inserted the document.
	Created bool
	// HandOffs counts how many holders in this process used the lease before this one.
	HandOffs int

	// start is the local time just before the acquiring request was sent: the
	// lease cannot expire before start+Duration by the database clock (if the
	// clocks run at the same rate), which bounds local hold decisions.
	start time.Time
	// given is set once this holder gave the lease up (released, dropped or
	// handed off); byWrite when that was by a fenced write of its own
	// (Locker.ReleasedByWrite). A later Release or Drop then leaves the
	// local queue alone: the turn is no longer this holder's to end.
	given, byWrite bool
}

// Fence returns the filter that admits a write only while this lease is held:
// {_id: Key, lockOwner: Owner, fencingToken: Token}. Append further conditions to it.
func (l *Lease) Fence() bson.D {
	return bson.D{{Key: "_id", Value: l.Key}, {Key: FieldOwner, Value: l.Owner}, {Key: FieldToken, Value: l.Token}}
}

// Validate checks that the lease is complete.
func (l *Lease) Validate() error {
	if l == nil || l.Key == "" || l.Owner == "" || l.Token <= 0 || l.Duration <= 0 {
		return fmt.Errorf("lock: incomplete lease %+v", l)
	}
	return nil
}

// ReleaseFields is the $unset document that releases a lease as part of a
// caller's own final fenced write, saving a round trip (then call
// Locker.ReleasedByWrite; Locker.CanReleaseInWrite says when to).
func ReleaseFields() bson.D {
	return bson.D{{Key: FieldOwner, Value: ""}, {Key: FieldTimestamp, Value: ""}, {Key: FieldDuration, Value: ""},
		{Key: FieldAcquisition, Value: ""}}
}
