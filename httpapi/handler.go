// Package httpapi serves bankd's HTTP API with Gin: accounts, deposits, withdrawals and
// transfers as JSON, every POST idempotent by its Idempotency-Key, errors as RFC 9457 problems
// with stable codes. Handlers decode, validate, call the domain packages and map the result;
// problem.go is the single place where errors become HTTP statuses.
package httpapi

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"log/slog"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/bankd/bankd/account"
	"github.com/bankd/bankd/idempotency"
	"github.com/bankd/bankd/transaction"
)

// Config tunes the API.
type Config struct {
	// APIKeys are the accepted bearer tokens. Empty: no authentication (loopback use only;
	// cmd/bankd refuses to listen elsewhere without keys).
	APIKeys []string
	// MaxBodyBytes bounds request bodies; default 64 KiB.
	MaxBodyBytes int64
	// Logger receives one line per request; nil discards.
	Logger *slog.Logger
	// Version is reported by /healthz.
	Version string
	// OperationTimeout bounds a POST's work, which continues if the client disconnects;
	// default 30 s.
	OperationTimeout time.Duration
}

// Deps are the domain services the API drives.
type Deps struct {
	Transfers *transaction.Service
	Accounts  *account.Store
	Keys      *idempotency.Store
	// Ping checks the database for /readyz.
	Ping    func(context.Context) error
	Metrics *Metrics
}

// Handler is the HTTP API.
type Handler struct {
	cfg    Config
	deps   Deps
	log    *slog.Logger
	engine *gin.Engine
	keys   []apiKey
}

type apiKey struct {
	token []byte
	scope string // stable id of the key for idempotency scoping and logs: never the key itself
}

func init() { gin.SetMode(gin.ReleaseMode) }

// New builds the API.
func New(cfg Config, deps Deps) *Handler {
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 64 << 10
	}
	if cfg.OperationTimeout <= 0 {
		cfg.OperationTimeout = 30 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if deps.Metrics == nil {
		deps.Metrics = NewMetrics()
	}
	h := &Handler{cfg: cfg, deps: deps, log: cfg.Logger}
	for _, k := range cfg.APIKeys {
		sum := sha256.Sum256([]byte(k))
		h.keys = append(h.keys, apiKey{token: []byte(k), scope: "key-" + hex.EncodeToString(sum[:8])})
	}
	e := gin.New()
	e.HandleMethodNotAllowed = true
	e.Use(h.requestID, h.logRequests, h.recoverPanics)
	e.NoRoute(func(c *gin.Context) { writeProblem(c, newProblem(http.StatusNotFound, CodeNotFound, "no such route")) })
	e.NoMethod(func(c *gin.Context) {
		writeProblem(c, newProblem(http.StatusMethodNotAllowed, CodeInvalidRequest, "method not allowed on this route"))
	})

	e.GET("/healthz", h.healthz)
	e.GET("/readyz", h.readyz)
	e.GET("/metrics", gin.WrapH(deps.Metrics.Handler()))
	e.GET("/openapi.yaml", h.openapi)

	v1 := e.Group("/v1", h.authenticate)
	v1.POST("/accounts", h.createAccount)
	v1.GET("/accounts/:id", h.getAccount)
	v1.POST("/accounts/:id/deposits", h.deposit)
	v1.POST("/accounts/:id/withdrawals", h.withdraw)
	v1.GET("/accounts/:id/transfers", h.listTransfers)
	v1.POST("/transfers", h.createTransfer)
	v1.GET("/transfers/:id", h.getTransfer)
	v1.GET("/audit", h.audit)
	h.engine = e
	return h
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.engine.ServeHTTP(w, r) }

// Routes lists method and path of every route (for the OpenAPI check).
func (h *Handler) Routes() [][2]string {
	var out [][2]string
	for _, r := range h.engine.Routes() {
		out = append(out, [2]string{r.Method, r.Path})
	}
	return out
}

func (h *Handler) healthz(c *gin.Context) {
	c.JSON(http.StatusOK, gin.H{"status": "ok", "version": h.cfg.Version})
}

func (h *Handler) readyz(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), 2*time.Second)
	defer cancel()
	if h.deps.Ping != nil {
		if err := h.deps.Ping(ctx); err != nil {
			h.log.Warn("readiness check failed", "err", err)
			writeProblem(c, newProblem(http.StatusServiceUnavailable, CodeUnavailable, "the database is unreachable"))
			return
		}
	}
	c.JSON(http.StatusOK, gin.H{"status": "ready"})
}

// authenticate checks the bearer token in constant time against every configured key.
func (h *Handler) authenticate(c *gin.Context) {
	if len(h.keys) == 0 {
		c.Set(ctxScope, "anonymous")
		return
	}
	const prefix = "Bearer "
	auth := c.GetHeader("Authorization")
	var scope string
	if len(auth) > len(prefix) && auth[:len(prefix)] == prefix {
		token := []byte(auth[len(prefix):])
		for _, k := range h.keys {
			if subtle.ConstantTimeCompare(token, k.token) == 1 {
				scope = k.scope
			}
		}
	}
	if scope == "" {
		c.Header("WWW-Authenticate", `Bearer realm="bankd"`)
		writeProblem(c, newProblem(http.StatusUnauthorized, CodeUnauthorized, "a valid 'Authorization: Bearer <key>' header is required"))
		c.Abort()
		return
	}
	c.Set(ctxScope, scope)
}

// Context keys.
const (
	ctxScope      = "bankd.scope"
	ctxRequestID  = "bankd.request_id"
	ctxTransferID = "bankd.transfer_id"
)
