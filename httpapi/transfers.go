package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/bankd/bankd/account"
	"github.com/bankd/bankd/transaction"
)

type amountRequest struct {
	Amount    int64  `json:"amount"`
	Currency  string `json:"currency"`
	Reference string `json:"reference,omitempty"`
}

type transferRequest struct {
	From      string `json:"from_account_id"`
	To        string `json:"to_account_id"`
	Amount    int64  `json:"amount"`
	Currency  string `json:"currency"`
	Reference string `json:"reference,omitempty"`
}

type transferJSON struct {
	ID            string     `json:"id"`
	Kind          string     `json:"kind"`
	From          string     `json:"from_account_id"`
	To            string     `json:"to_account_id"`
	Amount        int64      `json:"amount"`
	Currency      string     `json:"currency"`
	Reference     *string    `json:"reference"`
	Status        string     `json:"status"`
	FailureReason string     `json:"failure_reason,omitempty"`
	CreatedAt     time.Time  `json:"created_at"`
	CompletedAt   *time.Time `json:"completed_at"`
}

func toTransferJSON(t *transaction.Transfer) transferJSON {
	j := transferJSON{ID: t.ID, Kind: string(t.Kind), From: t.From, To: t.To, Amount: t.Amount,
		Currency: string(t.Currency), Status: string(t.State), CreatedAt: t.CreatedAt.UTC()}
	if t.Reference != "" {
		ref := t.Reference
		j.Reference = &ref
	}
	if t.State == transaction.StateFailed {
		j.FailureReason = string(t.Reason)
	}
	if t.CompletedAt != nil {
		ca := t.CompletedAt.UTC()
		j.CompletedAt = &ca
	}
	return j
}

// validateAmount checks what can be checked without the database.
func validateAmount(amount int64, currency string) error {
	if amount <= 0 {
		return fmt.Errorf("amount must be a positive integer in minor units, got %d", amount)
	}
	if _, err := account.ParseCurrency(currency); err != nil {
		return fmt.Errorf("unknown currency %q: an ISO 4217 code is required", currency)
	}
	return nil
}

func (h *Handler) createTransfer(c *gin.Context) {
	var req transferRequest
	if !h.bodyOf(c, &req) {
		return
	}
	err := validateAmount(req.Amount, req.Currency)
	switch {
	case err != nil:
	case req.From == "" || req.To == "":
		err = errors.New("from_account_id and to_account_id are required")
	case req.From == req.To:
		err = errors.New("from_account_id and to_account_id must differ")
	case len(req.Reference) > transaction.MaxReferenceLen:
		err = fmt.Errorf("reference must be at most %d bytes", transaction.MaxReferenceLen)
	}
	if err != nil {
		writeProblem(c, newProblem(http.StatusBadRequest, CodeInvalidRequest, err.Error()))
		return
	}
	body, _ := json.Marshal(req)
	h.idempotent(c, operation{Op: "transfer", Body: body})
}

func (h *Handler) deposit(c *gin.Context)  { h.depositOrWithdrawal(c, "deposit") }
func (h *Handler) withdraw(c *gin.Context) { h.depositOrWithdrawal(c, "withdrawal") }

func (h *Handler) depositOrWithdrawal(c *gin.Context, op string) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	var req amountRequest
	if !h.bodyOf(c, &req) {
		return
	}
	err := validateAmount(req.Amount, req.Currency)
	if err == nil && len(req.Reference) > transaction.MaxReferenceLen {
		err = fmt.Errorf("reference must be at most %d bytes", transaction.MaxReferenceLen)
	}
	if err != nil {
		writeProblem(c, newProblem(http.StatusBadRequest, CodeInvalidRequest, err.Error()))
		return
	}
	body, _ := json.Marshal(req)
	h.idempotent(c, operation{Op: op, Path: id, Body: body})
}

// execTransfer runs a transfer, deposit or withdrawal with id as the transfer id, so a re-run
// finishes the same transfer instead of starting another. It reports whether an earlier request
// had journaled that transfer. noWait: see transaction.Request.NoWait.
func (h *Handler) execTransfer(ctx context.Context, op operation, id string, noWait bool) (response, bool) {
	var req transaction.Request
	if op.Op == "transfer" {
		var body transferRequest
		if err := json.Unmarshal(op.Body, &body); err != nil {
			return h.errorResponse(err), false
		}
		req = transaction.Request{ID: id, From: body.From, To: body.To, Amount: body.Amount,
			Currency: account.Currency(body.Currency), Reference: body.Reference}
	} else {
		var body amountRequest
		if err := json.Unmarshal(op.Body, &body); err != nil {
			return h.errorResponse(err), false
		}
		req = transaction.ExternalRequest(transaction.Kind(op.Op), id, op.Path, body.Amount,
			account.Currency(body.Currency), body.Reference)
	}
	req.NoWait = noWait
	t, err := h.deps.Transfers.Transfer(ctx, req)
	replayed := t != nil && t.Replayed
	if err == nil && t.State != transaction.StateCompleted {
		err = fmt.Errorf("transfer %s left %s: %w", t.ID, t.State, context.DeadlineExceeded)
	}
	if !replayed {
		code := "completed"
		if err != nil {
			p, _ := classify(err)
			code = p.Code
		}
		h.deps.Metrics.observeTransfer(op.Op, code)
	}
	if err != nil {
		return h.errorResponse(err), replayed
	}
	return jsonResponse(http.StatusCreated, toTransferJSON(t)), replayed
}

func (h *Handler) getTransfer(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	t, err := h.deps.Transfers.Get(c.Request.Context(), id)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.Set(ctxTransferID, t.ID)
	c.JSON(http.StatusOK, toTransferJSON(t))
}

type transferPage struct {
	Data []transferJSON `json:"data"`
	Next *string        `json:"next"`
}

const defaultPageSize, maxPageSize = 20, 100

func (h *Handler) listTransfers(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	limit := defaultPageSize
	if s := c.Query("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxPageSize {
			writeProblem(c, newProblem(http.StatusBadRequest, CodeInvalidRequest, fmt.Sprintf("limit must be an integer from 1 to %d", maxPageSize)))
			return
		}
		limit = n
	}
	ctx := c.Request.Context()
	if _, err := h.deps.Accounts.Get(ctx, id); err != nil {
		h.fail(c, err)
		return
	}
	page, next, err := h.deps.Transfers.List(ctx, id, limit, c.Query("after"))
	if err != nil {
		h.fail(c, err)
		return
	}
	out := transferPage{Data: make([]transferJSON, 0, len(page))}
	for _, t := range page {
		out.Data = append(out.Data, toTransferJSON(t))
	}
	if next != "" {
		out.Next = &next
	}
	c.JSON(http.StatusOK, out)
}

func (h *Handler) audit(c *gin.Context) {
	report, err := h.deps.Transfers.Audit(c.Request.Context())
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"ok": report.OK(), "report": report})
}
