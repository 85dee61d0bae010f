package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/bankd/bankd/idempotency"
)

// operation is a POST reduced to what determines its effect: the fingerprint is taken over it,
// and it is stored with the idempotency record so recovery can re-run a request whose instance
// died (Replay).
type operation struct {
	Op   string          `json:"op"`             // create_account, deposit, withdrawal, transfer
	Path string          `json:"path,omitempty"` // the account id of deposits and withdrawals
	Body json.RawMessage `json:"body"`           // the canonical (re-encoded) request body
}

// response is an HTTP answer as stored for replays.
type response struct {
	status int
	body   []byte
}

// storable reports whether an answer is final for its key: success and the client's own
// errors are; busy, unavailable and internal errors are not, so a retry runs the request again
// (with the same resource id, so nothing is done twice).
func (r response) storable() bool { return r.status < 500 }

// idempotent runs a POST under its Idempotency-Key: the first request executes and its answer
// is stored; a retry with the same body gets that answer again; a different body is refused
// (422); a retry while the first is still running gets 409 with Retry-After.
func (h *Handler) idempotent(c *gin.Context, op operation) {
	key := c.GetHeader("Idempotency-Key")
	if key == "" {
		writeProblem(c, newProblem(http.StatusBadRequest, CodeInvalidRequest, "the Idempotency-Key header is required on every POST"))
		return
	}
	if err := idempotency.ValidateKey(key); err != nil {
		writeProblem(c, newProblem(http.StatusBadRequest, CodeInvalidRequest, "Idempotency-Key must be 1 to 255 printable ASCII characters"))
		return
	}
	// A client that hangs up must not leave its key half-claimed or its transfer half-driven:
	// the work runs to its end (bounded) whether or not anyone is still listening.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.Request.Context()), h.cfg.OperationTimeout)
	defer cancel()
	if movesMoney(op.Op) {
		h.moveMoneyOnce(ctx, c, op, key)
		return
	}
	canonical, err := json.Marshal(op)
	if err != nil {
		h.internal(c, err)
		return
	}
	rec, err := h.deps.Keys.Begin(ctx, idempotency.Begin{
		Scope:       c.GetString(ctxScope),
		Key:         key,
		Fingerprint: idempotency.Fingerprint(canonical),
		Request:     canonical,
	})
	if err != nil {
		h.fail(c, err)
		return
	}
	if rec.Replay {
		c.Header("Idempotent-Replayed", "true")
		writeStored(c, response{status: rec.Outcome.Status, body: rec.Outcome.Body})
		return
	}
	resp := h.execute(ctx, op, rec.ResourceID, c)
	if resp.storable() {
		if err := h.deps.Keys.Complete(ctx, rec, idempotency.Outcome{Status: resp.status, Body: resp.body}); err != nil {
			// The work is done and its answer is right; only the record is behind. It stays
			// in flight until its lease expires, then a retry (or recovery) re-runs the
			// request with the same resource id and stores the same answer.
			h.log.Warn("could not store idempotent outcome", "request_id", c.GetString(ctxRequestID), "err", err)
		}
	} else if err := h.deps.Keys.Release(ctx, rec); err != nil {
		h.log.Warn("could not release idempotency record", "request_id", c.GetString(ctxRequestID), "err", err)
	}
	writeStored(c, resp)
}

// movesMoney reports the operations that are transfers in the journal.
func movesMoney(op string) bool { return op == "transfer" || op == "deposit" || op == "withdrawal" }

// moveMoneyOnce runs a transfer, deposit or withdrawal under its key without an idempotency
// record: the transfer's id is derived from (scope, key), so the journal entry is the record.
// The first request journals it; a retry finds it and gets its outcome (Replayed), whatever
// the accounts are now, since refusals are journaled too; another body is ErrIDConflict (422);
// a retry while the first is being driven is ErrInProgress (409). That spares two writes per
// transfer (the record's claim and completion), a third of a transfer's work (bench/RESULTS.md).
func (h *Handler) moveMoneyOnce(ctx context.Context, c *gin.Context, op operation, key string) {
	id := transferID(c.GetString(ctxScope), key)
	c.Set(ctxTransferID, id)
	resp, replayed := h.execTransfer(ctx, op, id, true)
	if replayed {
		c.Header("Idempotent-Replayed", "true")
	}
	writeStored(c, resp)
}

// keyNamespace names the transfer ids derived from idempotency keys (RFC 9562 name-based UUIDs).
var keyNamespace = uuid.MustParse("6f1c1d0e-5b7a-4e0c-9a51-3d2b8f6a9c41")

// transferID is the id of the transfer made under an idempotency key: the same for every
// retry, different for every (scope, key).
func transferID(scope, key string) string {
	return uuid.NewSHA1(keyNamespace, []byte(scope+"\x00"+key)).String()
}

func writeStored(c *gin.Context, r response) {
	ct := "application/json"
	if r.status >= 400 {
		ct = "application/problem+json"
		if r.status == http.StatusServiceUnavailable || r.status == http.StatusConflict {
			c.Header("Retry-After", itoa(retryAfterSeconds))
		}
	}
	c.Data(r.status, ct, r.body)
}

// Replay re-runs the request of an idempotency record left in flight by a crashed instance
// and returns the answer to store (idempotency.Store.Settle calls it from recovery).
func (h *Handler) Replay(ctx context.Context, rec *idempotency.Record) (idempotency.Outcome, error) {
	var op operation
	if err := json.Unmarshal(rec.Request, &op); err != nil {
		return idempotency.Outcome{}, fmt.Errorf("replay %q: %w", rec.Key, err)
	}
	resp := h.execute(ctx, op, rec.ResourceID, nil)
	if !resp.storable() {
		return idempotency.Outcome{}, fmt.Errorf("replay %q: status %d, will retry", rec.Key, resp.status)
	}
	return idempotency.Outcome{Status: resp.status, Body: resp.body}, nil
}

// execute performs an operation with the record's resource id. c is nil during Replay.
func (h *Handler) execute(ctx context.Context, op operation, resourceID string, c *gin.Context) response {
	switch op.Op {
	case "create_account":
		return h.execCreateAccount(ctx, op, resourceID)
	case "deposit", "withdrawal", "transfer":
		if c != nil {
			c.Set(ctxTransferID, resourceID)
		}
		resp, _ := h.execTransfer(ctx, op, resourceID, false)
		return resp
	}
	return h.errorResponse(fmt.Errorf("unknown operation %q", op.Op))
}

// errorResponse renders an error as a stored-response problem.
func (h *Handler) errorResponse(err error) response {
	p, known := classify(err)
	if !known {
		h.log.Error("internal error", "err", err)
	}
	b, _ := json.Marshal(p)
	return response{status: p.Status, body: b}
}

func jsonResponse(status int, v any) response {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // our own response types always encode
	}
	return response{status: status, body: b}
}

// fail answers an error directly (not through an idempotency record).
func (h *Handler) fail(c *gin.Context, err error) {
	p, known := classify(err)
	if !known {
		h.internal(c, err)
		return
	}
	writeProblem(c, p)
}

func (h *Handler) internal(c *gin.Context, err error) {
	h.log.Error("internal error", "request_id", c.GetString(ctxRequestID), "err", err)
	writeProblem(c, newProblem(http.StatusInternalServerError, CodeInternal, "an internal error occurred"))
}

// bodyOf reads and strictly decodes the JSON body into v, answering 400/413 itself.
func (h *Handler) bodyOf(c *gin.Context, v any) bool {
	body, err := readBody(c.Request, h.cfg.MaxBodyBytes)
	if errors.Is(err, errTooLarge) {
		writeProblem(c, newProblem(http.StatusRequestEntityTooLarge, CodePayloadTooLarge, fmt.Sprintf("request bodies are limited to %d bytes", h.cfg.MaxBodyBytes)))
		return false
	}
	if err != nil {
		writeProblem(c, newProblem(http.StatusBadRequest, CodeInvalidRequest, "could not read the request body"))
		return false
	}
	if err := decodeStrict(body, v); err != nil {
		writeProblem(c, newProblem(http.StatusBadRequest, CodeInvalidRequest, err.Error()))
		return false
	}
	return true
}
