package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/bankd/bankd/account"
)

type createAccountRequest struct {
	Currency string `json:"currency"`
	Owner    string `json:"owner"`
}

type accountJSON struct {
	ID        string    `json:"id"`
	Owner     string    `json:"owner"`
	Currency  string    `json:"currency"`
	Balance   int64     `json:"balance"`
	Status    string    `json:"status"`
	CreatedAt time.Time `json:"created_at"`
}

func toAccountJSON(a *account.Account) accountJSON {
	return accountJSON{ID: a.ID, Owner: a.Owner, Currency: string(a.Currency), Balance: a.Balance,
		Status: string(a.Status), CreatedAt: a.CreatedAt.UTC()}
}

func (h *Handler) createAccount(c *gin.Context) {
	var req createAccountRequest
	if !h.bodyOf(c, &req) {
		return
	}
	if _, err := account.ParseCurrency(req.Currency); err != nil {
		writeProblem(c, newProblem(http.StatusBadRequest, CodeInvalidRequest, fmt.Sprintf("unknown currency %q: an ISO 4217 code is required", req.Currency)))
		return
	}
	if req.Owner == "" || len(req.Owner) > account.MaxOwnerLen {
		writeProblem(c, newProblem(http.StatusBadRequest, CodeInvalidRequest, fmt.Sprintf("owner must be 1 to %d bytes", account.MaxOwnerLen)))
		return
	}
	body, _ := json.Marshal(req)
	h.idempotent(c, operation{Op: "create_account", Body: body})
}

func (h *Handler) execCreateAccount(ctx context.Context, op operation, id string) response {
	var req createAccountRequest
	if err := json.Unmarshal(op.Body, &req); err != nil {
		return h.errorResponse(err)
	}
	cur, err := account.ParseCurrency(req.Currency)
	if err != nil {
		return h.errorResponse(err)
	}
	a, err := h.deps.Accounts.CreateWithID(ctx, id, req.Owner, cur)
	if err != nil {
		return h.errorResponse(err)
	}
	return jsonResponse(http.StatusCreated, toAccountJSON(a))
}

func (h *Handler) getAccount(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	a, err := h.deps.Accounts.Get(c.Request.Context(), id)
	if err != nil {
		h.fail(c, err)
		return
	}
	if a.Kind != account.KindCustomer {
		writeProblem(c, newProblem(http.StatusNotFound, CodeNotFound, "no such account"))
		return
	}
	c.JSON(http.StatusOK, toAccountJSON(a))
}

// pathID returns the :id path parameter if it is a UUID; anything else cannot name an account
// or transfer, so it is answered 404 here.
func pathID(c *gin.Context) (string, bool) {
	id := c.Param("id")
	if _, err := uuid.Parse(id); err != nil || len(id) != 36 {
		writeProblem(c, newProblem(http.StatusNotFound, CodeNotFound, "ids are UUIDs; no such resource"))
		return "", false
	}
	return id, true
}
