package transaction

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/bankd/bankd/account"
	"github.com/bankd/bankd/internal/testmongo"
	"github.com/bankd/bankd/lock"
)

func TestMain(m *testing.M) { testmongo.Main(m) }

const usd = account.Currency("USD")

// newSvc starts a Service on db with indexes in place.
func newSvc(t *testing.T, db *mongo.Database, cfg Config) *Service {
	t.Helper()
	if cfg.Lock.WaitTimeout == 0 {
		cfg.Lock.WaitTimeout = 30 * time.Second
	}
	s, err := New(db, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureIndexes(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

// secondInstance is db seen through another client: another bankd instance.
func secondInstance(t *testing.T, db *mongo.Database) *mongo.Database {
	return testmongo.NewClient(t).Database(db.Name())
}

// openAccounts creates n USD accounts funded with balance each.
func openAccounts(t *testing.T, s *Service, n int, balance int64) []string {
	t.Helper()
	ctx := context.Background()
	ids := make([]string, n)
	for i := range ids {
		a, err := s.Accounts().Create(ctx, fmt.Sprintf("owner%d", i), usd)
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = a.ID
		if balance > 0 {
			if _, err := s.Deposit(ctx, uuid.NewString(), a.ID, balance, usd, "seed"); err != nil {
				t.Fatal(err)
			}
		}
	}
	return ids
}

func balance(t *testing.T, s *Service, id string) int64 {
	t.Helper()
	a, err := s.Accounts().Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return a.Balance
}

func mustAudit(t *testing.T, s *Service) *AuditReport {
	t.Helper()
	rep, err := s.Audit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Errorf("audit found %d violations: %v", len(rep.Violations), rep.Violations)
	}
	if rep.Unfinished != 0 {
		t.Errorf("audit: %d unfinished transfers, want 0", rep.Unfinished)
	}
	return rep
}

// shortLeases makes crashed holders' leases expire quickly.
func shortLeases(owner string) lock.Config {
	return lock.Config{Owner: owner, LeaseDuration: 150 * time.Millisecond, WaitTimeout: 10 * time.Second}
}
