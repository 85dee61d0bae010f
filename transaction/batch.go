package transaction

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/bankd/bankd/account"
	"github.com/bankd/bankd/internal/bulk"
	"github.com/bankd/bankd/lock"
)

// A batch applies the new transfers that arrived while the previous batch
// was being applied, with the same writes and the same states as a transfer
// driven alone (drive.go), only each write is one statement of a command
// shared by the whole batch, and each account is leased and written once
// for all the batch's transfers that touch it:
//
//  1. lease every account of the batch (lock.AcquireMany: Acquire's
//     conditional update, as one update of them all, never waiting: an
//     account held elsewhere sends its transfers alone), and at the same
//     time journal the transfers, pending, each with its own lease (one
//     command on the other collection);
//  2. check the rules on the leased documents; a transfer that cannot go on
//     here goes back to its caller journaled, with its lease, and the caller
//     drives it on alone as a retry would;
//  3. decide each transfer in arrival order against running balances, which
//     no one else can change while the leases are held;
//  4. per account one fenced write: the sum of its legs, a marker per
//     transfer, the lease released (one command);
//  5. mark the transfers completed, or failed (one command), and answer the
//     callers. Their markers are removed by the accounts' next leases here,
//     in the same write ($pull beside the lease: no write of their own),
//     or by one command when more than maxStale are waiting.
//
// Step 5 runs while the next batch starts: the accounts are free after 4.
// A transfer driven alone passes through applied, removes its markers and
// then completes; a batch completes first and removes the markers after,
// sparing a write and two round trips of its callers' wait. Both are safe
// for the same reason: markers matter only while a transfer is pending (to
// keep a re-drive from applying a leg twice), and nothing drives a
// terminal transfer. A crash before 5 leaves what a transfer driven alone
// leaves at some step (a journaled transfer that leased nothing is one
// about to lease its accounts), so recovery is unchanged; a crash after it
// may leave markers of completed transfers, which nothing reads. Journaling
// before the rules are checked is safe because a refusal is an outcome
// that is journaled too: the caller's own drive records it. Anything unexpected (a fenced
// statement refused, a transfer id already journaled, a failed command)
// hands the transfers concerned back to their callers, who drive them
// alone: every step is idempotent, by markers and by states.

// DefaultMaxBatch bounds a batch.
const DefaultMaxBatch = 256

// DefaultParallelBatches is how many batches are applied at once. A batch's
// time is mostly round trips and fsyncs, so a second one in flight helps
// where those dominate; on the 2-core machines measured (bench/RESULTS.md)
// the CPU was already saturated and two in flight gained nothing.
const DefaultParallelBatches = 1

type batchItem struct {
	req  Request
	t    *Transfer
	done chan batchResult // buffered: the batch never waits for its caller

	tl        *lock.Lease // the transfer's own lease, once journaled
	handOver  bool        // sent back with tl still held, for the caller to go on with
	from, to  *lock.Lease
	reason    Reason // failed with this reason
	debited   bool   // its debit is in this batch's writes
	credited  bool   // its credit too
	abandoned bool   // a hook crashed it: nothing more is done for it
	answered  bool
}

type batchResult struct {
	t         *Transfer
	err       error
	slow      bool        // not done here: the caller drives the transfer alone
	journaled bool        // with slow: this batch journaled it
	lease     *lock.Lease // with slow: t's lease, handed over to the caller
}

// submit queues a new transfer for the next batch and waits for its
// outcome. r.slow reports that the caller must drive it alone.
func (s *Service) submit(ctx context.Context, req Request) batchResult {
	it := &batchItem{req: req, t: newTransfer(req, s.cfg.Now()), done: make(chan batchResult, 1)}
	// The batch runs its steps 1 to 4 before Do returns, step 5 after.
	_, err := s.batches.Do(ctx, it)
	if err == nil {
		select {
		case r := <-it.done:
			return r
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	// The transfer is queued and may still be applied: like any journaled
	// transfer, a retry with its id, or recovery, finds it. A lease handed
	// over to this caller goes back, so that they can.
	go func() {
		if r := <-it.done; r.lease != nil {
			s.giveBack(r.lease)
		}
	}()
	return batchResult{err: err}
}

func (it *batchItem) answer(t *Transfer, err error) {
	if !it.answered {
		it.answered = true
		it.done <- batchResult{t: t, err: err}
	}
}

// applyBatch runs steps 1 to 4 and leaves step 5 to a goroutine. Batches
// running at once never share an account (bulk.Group's Keys): they never
// contend for a lease, and each account's transfers keep their order.
func (s *Service) applyBatch(_ context.Context, items []*batchItem) []struct{} {
	// The batch's writes are bounded by the leases' life: past it they are refused anyway.
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.Lock.LeaseDuration)
	var slow, journaled []*batchItem
	// Two collections, two commands at once: the engine can serve both together, and the
	// batch waits for the longer of the two instead of both in turn.
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		journaled, slow = s.journal(ctx, items)
	}()
	leases := s.leaseAccounts(ctx, items)
	<-wrote
	defer func() {
		// Leases a leg write did not release go back now (or to a local waiter), before the
		// transfers sent back to their callers ask for them.
		for _, l := range leases {
			s.releaseAccounts(l)
		}
		s.sendBack(slow)
		cancel()
	}()

	accs := decodeLeased(leases)
	var live []*batchItem
	for _, it := range journaled {
		it.from, it.to = leases[it.req.From], leases[it.req.To]
		from, to := accs[it.req.From], accs[it.req.To]
		if from == nil || to == nil || check(it.req, from, to) != "" {
			// Held elsewhere, missing, or refused: the caller goes on from the journal.
			it.handOver = true
			slow = append(slow, it)
			continue
		}
		live = append(live, it)
	}
	live = s.decide(ctx, live, accs)
	landed, unsure := s.writeLegs(ctx, live, accs)
	slow = append(slow, s.giveBackAll(unsure)...)
	if len(landed) > 0 {
		go s.finishBatch(landed)
	}
	return make([]struct{}, len(items))
}

// leaseAccounts takes the lease of every account the items touch, all at
// once; an account it cannot have right now is simply missing.
func (s *Service) leaseAccounts(ctx context.Context, items []*batchItem) map[string]*lock.Lease {
	var keys []string
	seen := map[string]bool{}
	for _, it := range items {
		for _, k := range []string{it.req.From, it.req.To} {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	also, sent := s.stalePulls(keys)
	leases := s.accLocks.AcquireMany(ctx, keys, also) // held, missing or failed: its transfers go alone
	s.stalePulled(leases, sent)
	return leases
}

// maxStale bounds the markers of completed transfers kept for a later lease
// to remove; past it a batch removes its own at once.
const maxStale = 100_000

// stalePulls is the $pull operator that removes, in the same write as their
// leases, the keys' markers of transfers completed here, and how many of
// each key's markers it names. Nothing reads a terminal transfer's markers,
// so they can wait for the account's next lease instead of costing a write
// of their own. One operator names them all, for every key: a transfer's
// marker is only ever on its own two accounts, so pulling it from another
// removes nothing.
func (s *Service) stalePulls(keys []string) (bson.D, map[string]int) {
	s.staleMu.Lock()
	defer s.staleMu.Unlock()
	var ids []string
	sent := map[string]int{}
	for _, k := range keys {
		if stale := s.stale[k]; len(stale) > 0 {
			ids = append(ids, stale...)
			sent[k] = len(stale)
		}
	}
	if len(ids) == 0 {
		return nil, sent
	}
	return bson.D{{Key: "$pull", Value: bson.D{{Key: markers, Value: bson.D{{Key: "$in", Value: ids}}}}}}, sent
}

// stalePulled forgets the markers the leases taken have removed. Only
// finishBatch adds to a key's list, at its end, and batches never share an
// account, so the first sent[k] are those that were named.
func (s *Service) stalePulled(leases map[string]*lock.Lease, sent map[string]int) {
	s.staleMu.Lock()
	defer s.staleMu.Unlock()
	for k, n := range sent {
		if leases[k] == nil {
			continue // not leased, so not written: the next lease tries again
		}
		s.staleN -= n
		if s.stale[k] = s.stale[k][n:]; len(s.stale[k]) == 0 {
			delete(s.stale, k)
		}
	}
}

// deferPulls keeps completed transfers' markers for the accounts' next
// leases to remove; it reports false, keeping nothing, when that would pass
// maxStale.
func (s *Service) deferPulls(pulls map[string][]string, n int) bool {
	s.staleMu.Lock()
	defer s.staleMu.Unlock()
	if s.staleN+n > s.staleMax {
		return false
	}
	for k, ids := range pulls {
		s.stale[k] = append(s.stale[k], ids...)
	}
	s.staleN += n
	return true
}

// decodeLeased decodes the leased accounts once for the whole batch; an
// account that does not decode is left out, and its transfers go alone.
func decodeLeased(leases map[string]*lock.Lease) map[string]*account.Account {
	accs := make(map[string]*account.Account, len(leases))
	for k, l := range leases {
		if a, err := decodeAccount(l); err == nil {
			accs[k] = a
		}
	}
	return accs
}

// journal writes the items' transfers, pending and leased, in one command.
// An id journaled before goes back to its caller (slow), who resumes it.
func (s *Service) journal(ctx context.Context, items []*batchItem) (journaled, slow []*batchItem) {
	ids := make([]string, len(items))
	fields := make([]bson.D, len(items))
	for i, it := range items {
		ids[i], fields[i] = it.t.ID, s.store.newFields(it.t)
	}
	tls, errs := s.xferLocks.InsertMany(ctx, ids, fields)
	for i, it := range items {
		switch {
		case errors.Is(errs[i], lock.ErrExists):
			slow = append(slow, it)
		case errs[i] != nil:
			it.answer(nil, fmt.Errorf("transfer %s: %w", it.t.ID, errs[i]))
		default:
			it.tl = tls[i]
			if err := s.hook(ctx, it.t.ID, StepLock); err != nil {
				s.abandon(it, err)
				continue
			}
			journaled = append(journaled, it)
		}
	}
	return journaled, slow
}

// abandon leaves an item where a hook stopped it, leases held, as a dead process would.
func (s *Service) abandon(it *batchItem, err error) {
	it.abandoned = true
	if it.tl != nil {
		s.xferLocks.Drop(it.tl)
	}
	it.answer(nil, err)
}

// decide goes through the items in arrival order against running balances:
// each is debited and credited, or fails (insufficient funds, overflow).
func (s *Service) decide(ctx context.Context, items []*batchItem, accs map[string]*account.Account) []*batchItem {
	bal := map[string]int64{}
	balanceOf := func(l *lock.Lease) int64 {
		if b, ok := bal[l.Key]; ok {
			return b
		}
		return accs[l.Key].Balance
	}
	var out []*batchItem
	for _, it := range items {
		if err := s.hook(ctx, it.t.ID, StepDebit); err != nil {
			s.abandon(it, err)
			continue
		}
		out = append(out, it)
		fromBal, toBal := balanceOf(it.from), balanceOf(it.to)
		nf, err1 := account.Sub(fromBal, it.t.Amount)
		nt, err2 := account.Add(toBal, it.t.Amount)
		switch {
		case err1 != nil || err2 != nil:
			it.reason = ReasonOverflow
			continue
		case nf < 0 && !accs[it.req.From].CanGoNegative():
			it.reason = ReasonInsufficientFunds
			continue
		}
		bal[it.from.Key], it.debited = nf, true
		if err := s.hook(ctx, it.t.ID, StepCredit); err != nil {
			s.abandon(it, err) // after its debit: the debit is still written
			continue
		}
		bal[it.to.Key], it.credited = nt, true
	}
	return out
}

type accountWrite struct {
	lease   *lock.Lease
	ids     []string
	delta   int64
	release bool
}

// writeLegs writes each account's legs in one fenced statement each. It
// returns the items whose legs are on the balances (or which failed and
// have none) and those whose outcome it does not know, to be driven alone.
func (s *Service) writeLegs(ctx context.Context, items []*batchItem, accs map[string]*account.Account) (landed, unsure []*batchItem) {
	writes := map[string]*accountWrite{}
	var order []*accountWrite
	leg := func(l *lock.Lease, id string, delta int64) {
		w := writes[l.Key]
		if w == nil {
			w = &accountWrite{lease: l}
			writes[l.Key] = w
			order = append(order, w)
		}
		w.ids = append(w.ids, id)
		w.delta += delta
	}
	for _, it := range items {
		if it.debited {
			leg(it.from, it.t.ID, -it.t.Amount)
		}
		if it.credited {
			leg(it.to, it.t.ID, it.t.Amount)
		}
	}
	stmts := make([]bulk.Update, len(order))
	for i, w := range order {
		filter := append(w.lease.Fence(),
			bson.E{Key: "balance", Value: accs[w.lease.Key].Balance}, // what the decisions were made on
			bson.E{Key: markers, Value: bson.D{{Key: "$nin", Value: w.ids}}})
		update := bson.D{
			{Key: "$inc", Value: bson.D{{Key: "balance", Value: w.delta}}},
			{Key: "$push", Value: bson.D{{Key: markers, Value: bson.D{{Key: "$each", Value: w.ids}}}}},
			{Key: "$currentDate", Value: bson.D{{Key: "updatedAt", Value: true}}},
		}
		if w.release = s.accLocks.CanReleaseInWrite(w.lease); w.release {
			update = append(update, bson.E{Key: "$unset", Value: lock.ReleaseFields()})
		}
		stmts[i] = bulk.Update{Filter: filter, U: update}
	}
	applied := make(map[string]bool, len(order))
	res, err := bulk.UpdateMany(ctx, s.store.accounts, stmts)
	if err == nil && res.OK(len(stmts)) {
		for _, w := range order {
			applied[w.lease.Key] = true
		}
	} else if len(stmts) > 0 {
		applied = s.legsOnAccounts(ctx, order)
	}
	for _, w := range order {
		if !applied[w.lease.Key] {
			continue
		}
		if w.release {
			s.accLocks.ReleasedByWrite(w.lease)
		}
	}
	for _, it := range items {
		switch {
		case it.debited && !applied[it.from.Key], it.credited && !applied[it.to.Key]:
			unsure = append(unsure, it)
		case it.abandoned: // crashed after its debit: it stays as it is
		default:
			landed = append(landed, it)
		}
	}
	return landed, unsure
}

// legsOnAccounts reads back which account writes were applied (their
// markers are there), after a command that did not say.
func (s *Service) legsOnAccounts(ctx context.Context, ws []*accountWrite) map[string]bool {
	keys := make([]string, len(ws))
	for i, w := range ws {
		keys[i] = w.lease.Key
	}
	applied := map[string]bool{}
	cur, err := s.store.accounts.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: keys}}}},
		options.Find().SetProjection(bson.D{{Key: markers, Value: 1}}).SetBatchSize(int32(len(keys))))
	if err != nil {
		return applied
	}
	var docs []struct {
		ID      string   `bson:"_id"`
		Markers []string `bson:"pendingTransfers"`
	}
	if cur.All(ctx, &docs) != nil {
		return applied
	}
	byKey := map[string][]string{}
	for _, d := range docs {
		byKey[d.ID] = d.Markers
	}
	for _, w := range ws {
		// One statement: all its markers or none.
		if slices.Contains(byKey[w.lease.Key], w.ids[0]) {
			applied[w.lease.Key] = true
		} else {
			s.accLocks.Lost(w.lease)
		}
	}
	return applied
}

// finishBatch records the outcomes (step 6) in one command: completed
// (both legs are on the balances) or failed, each transfer's lease released.
// The callers are answered then; the markers, which nothing reads once a
// transfer is terminal, are removed after. The accounts are already free.
func (s *Service) finishBatch(items []*batchItem) {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.Lock.LeaseDuration)
	defer cancel()
	var slow []*batchItem
	defer func() { s.sendBack(slow) }()

	now := s.cfg.Now().UTC().Truncate(time.Millisecond)
	var stmts []bulk.Update
	var sent []*batchItem
	for _, it := range items {
		steps := []Step{StepApply, StepComplete}
		next := StateCompleted
		if it.reason != "" {
			steps, next = []Step{StepFail}, StateFailed
		}
		if err := s.hooks(ctx, it.t.ID, steps...); err != nil {
			s.abandon(it, err)
			continue
		}
		stmts = append(stmts, stateStmt(it.tl, StatePending, next, it.reason, now))
		sent = append(sent, it)
	}
	ok, back := s.runStates(ctx, sent, stmts)
	slow = append(slow, back...)

	pulls := map[string][]string{}
	var accs []string
	n := 0
	for _, it := range ok {
		s.xferLocks.Drop(it.tl) // released by the write
		if it.reason != "" {
			it.answer(finished(it.t, StateFailed, it.reason, now), it.t.withReason(it.reason).Err())
			continue
		}
		if err := s.hook(ctx, it.t.ID, StepCleanup); err != nil {
			it.answer(nil, err) // completed, markers left: as a crash right after completing leaves them
			continue
		}
		it.answer(finished(it.t, StateCompleted, "", now), nil)
		for _, k := range []string{it.t.From, it.t.To} {
			if pulls[k] == nil {
				accs = append(accs, k)
			}
			pulls[k] = append(pulls[k], it.t.ID)
			n++
		}
	}
	if len(accs) == 0 || s.deferPulls(pulls, n) {
		return
	}
	// Too many kept already: one $pull per account for all its transfers of
	// the batch. A failure leaves markers of completed transfers behind:
	// never read again.
	pullStmts := make([]bulk.Update, len(accs))
	for i, k := range accs {
		in := bson.D{{Key: "$in", Value: pulls[k]}}
		pullStmts[i] = bulk.Update{Filter: bson.D{{Key: "_id", Value: k}, {Key: markers, Value: in}},
			U: bson.D{{Key: "$pull", Value: bson.D{{Key: markers, Value: in}}}}}
	}
	if _, err := bulk.UpdateMany(ctx, s.store.accounts, pullStmts); err != nil {
		s.cfg.Logger.Warn("batch: markers of completed transfers not removed", "accounts", len(accs), "err", err)
	}
}

// hooks runs the hooks of several steps in order.
func (s *Service) hooks(ctx context.Context, id string, steps ...Step) error {
	for _, st := range steps {
		if err := s.hook(ctx, id, st); err != nil {
			return err
		}
	}
	return nil
}

// runStates runs the state statements; if any was refused, or the command
// failed, it cannot tell which: all go back to their callers.
func (s *Service) runStates(ctx context.Context, items []*batchItem, stmts []bulk.Update) (ok, back []*batchItem) {
	if len(stmts) == 0 {
		return nil, nil
	}
	res, err := bulk.UpdateMany(ctx, s.store.coll, stmts)
	if err != nil || !res.OK(len(stmts)) {
		return nil, s.giveBackAll(items)
	}
	return items, nil
}

// stateStmt is setState as a statement: from → next, fenced by the
// transfer's lease, which a terminal state releases.
func stateStmt(l *lock.Lease, from, next State, reason Reason, now time.Time) bulk.Update {
	set := bson.D{{Key: "state", Value: next}, {Key: "updatedAt", Value: now}}
	if reason != "" {
		set = append(set, bson.E{Key: "reason", Value: reason})
	}
	update := bson.D{{Key: "$set", Value: set}}
	if next.Terminal() {
		set = append(set, bson.E{Key: "completedAt", Value: now})
		update = bson.D{{Key: "$set", Value: set}, {Key: "$unset", Value: lock.ReleaseFields()}}
	}
	return bulk.Update{Filter: append(l.Fence(), bson.E{Key: "state", Value: from}), U: update}
}

// giveBackAll releases the items' transfer leases so that their callers
// can drive them alone at once.
func (s *Service) giveBackAll(items []*batchItem) []*batchItem {
	for _, it := range items {
		s.giveBack(it.tl)
	}
	return items
}

// sendBack hands items to their callers, to be driven alone.
func (s *Service) sendBack(items []*batchItem) {
	for _, it := range items {
		if !it.answered {
			it.answered = true
			r := batchResult{slow: true, journaled: it.tl != nil}
			if it.handOver {
				r.t, r.lease = it.t, it.tl
			}
			it.done <- r
		}
	}
}

func finished(t *Transfer, state State, reason Reason, now time.Time) *Transfer {
	u := *t
	u.State, u.Reason, u.UpdatedAt, u.CompletedAt = state, reason, now, &now
	return &u
}

func (t *Transfer) withReason(r Reason) *Transfer {
	u := *t
	u.State, u.Reason = StateFailed, r
	return &u
}
