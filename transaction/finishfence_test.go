package transaction

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/internal/testmongo"
	"github.com/bankd/bankd/lock"
)

// TestBatchCompletionIsFencedPerTransfer: a batch completes its transfers in one command, each
// statement fenced by its transfer's lease. When another instance has taken one of them over
// just before, that one is not completed by the batch; the batch cannot tell which statement
// was refused, so every transfer of it goes back to its caller, who finishes it alone. All
// end completed, once.
func TestBatchCompletionIsFencedPerTransfer(t *testing.T) {
	db := testmongo.Database(t)
	ctx := context.Background()
	var (
		mu        sync.Mutex
		victim    string
		completes = map[string]int{}
	)
	var svc *Service
	cfg := Config{Lock: shortLeases("batcher"), Hooks: Hooks{BeforeStep: func(_ context.Context, id string, s Step) error {
		if s != StepComplete {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		completes[id]++
		if victim == "" && completes[id] == 1 {
			// Another instance takes this transfer's lease over: a new owner and token.
			victim = id
			_, err := svc.store.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, bson.D{
				{Key: "$set", Value: bson.D{{Key: lock.FieldOwner, Value: "thief"}, {Key: lock.FieldDuration, Value: int64(100)}}},
				{Key: "$currentDate", Value: bson.D{{Key: lock.FieldTimestamp, Value: true}}},
				{Key: "$inc", Value: bson.D{{Key: lock.FieldToken, Value: int64(1)}}},
			})
			return err
		}
		return nil
	}}}
	svc = newSvc(t, db, cfg)
	ids := openAccounts(t, svc, 8, 1000)

	const transfers = 32
	var wg sync.WaitGroup
	errs := make(chan error, transfers)
	reqs := make([]Request, transfers)
	for i := range reqs {
		reqs[i] = Request{ID: uuid.NewString(), From: ids[i%8], To: ids[(i+3)%8], Amount: 10, Currency: usd}
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr, err := svc.Transfer(ctx, reqs[i])
			if err == nil && tr.State != StateCompleted {
				err = fmt.Errorf("transfer %s ended %s", tr.ID, tr.State)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if victim == "" {
		t.Fatal("no transfer was taken over")
	}
	if completes[victim] < 2 {
		t.Errorf("the transfer taken over was completed by the batch's statement (%d completion steps), its fence ignored", completes[victim])
	}
	var total int64
	for _, id := range ids {
		total += balance(t, svc, id)
	}
	if total != 8*1000 {
		t.Errorf("balances sum to %d, want %d", total, 8*1000)
	}
	mustAudit(t, svc)
}
