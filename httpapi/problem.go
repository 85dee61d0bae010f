package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/bankd/bankd/account"
	"github.com/bankd/bankd/idempotency"
	"github.com/bankd/bankd/lock"
	"github.com/bankd/bankd/transaction"
)

// Problem is an RFC 9457 problem document with bankd's stable error code.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
	Code   string `json:"code"`
}

// Stable error codes. Clients branch on these, never on titles or details.
const (
	CodeInvalidRequest   = "invalid_request"
	CodeUnauthorized     = "unauthorized"
	CodeNotFound         = "not_found"
	CodeKeyInUse         = "idempotency_key_in_use"
	CodePayloadTooLarge  = "payload_too_large"
	CodeInsufficient     = "insufficient_funds"
	CodeCurrencyMismatch = "currency_mismatch"
	CodeAccountInactive  = "account_inactive"
	CodeKeyReused        = "idempotency_key_reused"
	CodeAccountBusy      = "account_busy"
	CodeUnavailable      = "unavailable"
	CodeInternal         = "internal"
)

var titles = map[string]string{
	CodeInvalidRequest:   "Invalid request",
	CodeUnauthorized:     "Unauthorized",
	CodeNotFound:         "Not found",
	CodeKeyInUse:         "Idempotency key in use",
	CodePayloadTooLarge:  "Payload too large",
	CodeInsufficient:     "Insufficient funds",
	CodeCurrencyMismatch: "Currency mismatch",
	CodeAccountInactive:  "Account not active",
	CodeKeyReused:        "Idempotency key reused",
	CodeAccountBusy:      "Account busy",
	CodeUnavailable:      "Service unavailable",
	CodeInternal:         "Internal error",
}

func newProblem(status int, code, detail string) Problem {
	return Problem{Type: "https://bankd.dev/problems/" + code, Title: titles[code], Status: status, Detail: detail, Code: code}
}

// retryAfterSeconds is what 409 and 503 answers tell clients to wait.
const retryAfterSeconds = 1

func writeProblem(c *gin.Context, p Problem) {
	if p.Status == http.StatusServiceUnavailable || p.Status == http.StatusConflict {
		c.Header("Retry-After", strconv.Itoa(retryAfterSeconds))
	}
	c.Header("Content-Type", "application/problem+json")
	c.Render(p.Status, problemRender{p})
}

// classify maps a domain or database error to its problem: the one place errors become statuses.
// Unknown errors are internal: the caller logs them in full and the client sees no detail.
func classify(err error) (Problem, bool) {
	switch {
	case errors.Is(err, transaction.ErrInvalid), errors.Is(err, account.ErrInvalid), errors.Is(err, account.ErrUnknownCurrency):
		return newProblem(http.StatusBadRequest, CodeInvalidRequest, err.Error()), true
	case errors.Is(err, account.ErrNotFound), errors.Is(err, transaction.ErrNotFound):
		return newProblem(http.StatusNotFound, CodeNotFound, "no such account or transfer"), true
	case errors.Is(err, transaction.ErrInsufficientFunds):
		return newProblem(http.StatusUnprocessableEntity, CodeInsufficient, "the source account's balance does not cover the amount"), true
	case errors.Is(err, transaction.ErrCurrencyMismatch):
		return newProblem(http.StatusUnprocessableEntity, CodeCurrencyMismatch, "the currencies of the accounts and the request differ"), true
	case errors.Is(err, transaction.ErrAccountInactive):
		return newProblem(http.StatusUnprocessableEntity, CodeAccountInactive, "an account of the transfer is not active"), true
	case errors.Is(err, transaction.ErrIDConflict), errors.Is(err, idempotency.ErrKeyMismatch):
		return newProblem(http.StatusUnprocessableEntity, CodeKeyReused, "this Idempotency-Key was used with a different request"), true
	case errors.Is(err, idempotency.ErrInFlight), errors.Is(err, transaction.ErrInProgress):
		return newProblem(http.StatusConflict, CodeKeyInUse, "a request with this Idempotency-Key is still being processed; retry later"), true
	case errors.Is(err, lock.ErrTimeout), errors.Is(err, lock.ErrHeld):
		return newProblem(http.StatusServiceUnavailable, CodeAccountBusy, "an account of the transfer is busy; retry with the same Idempotency-Key"), true
	case unavailable(err):
		return newProblem(http.StatusServiceUnavailable, CodeUnavailable, "the database is unreachable; retry with the same Idempotency-Key"), true
	}
	return newProblem(http.StatusInternalServerError, CodeInternal, "an internal error occurred"), false
}

// unavailable reports database and deadline errors a retry may get past.
func unavailable(err error) bool {
	var ce mongo.CommandError
	var we mongo.WriteException
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, lock.ErrLeaseLost),
		mongo.IsNetworkError(err), mongo.IsTimeout(err),
		errors.Is(err, mongo.ErrClientDisconnected):
		return true
	case errors.As(err, &ce):
		return true // the server answered with an error: a fault on its side (fail points, shutdown, ...)
	case errors.As(err, &we) && we.WriteConcernError != nil:
		return true
	}
	// The driver's own transient failures (a connection pool cleared after another operation's
	// network error, ...) say so through Retryable.
	var re interface{ Retryable() bool }
	return errors.As(err, &re) && re.Retryable()
}

// problemRender writes a problem as JSON with the problem+json content type gin would override.
type problemRender struct{ p Problem }

func (r problemRender) Render(w http.ResponseWriter) error {
	return writeJSON(w, r.p)
}

func (r problemRender) WriteContentType(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/problem+json")
}
