package httpapi

import (
	"fmt"
	"net/http"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
)

// requestID accepts a sane X-Request-Id from the client or makes one, and echoes it.
func (h *Handler) requestID(c *gin.Context) {
	id := c.GetHeader("X-Request-Id")
	if id == "" || len(id) > 128 || !printable(id) {
		id = uuid.NewString()
	}
	c.Set(ctxRequestID, id)
	c.Header("X-Request-Id", id)
	c.Next()
}

// logRequests writes one structured line per request and records the request metrics.
func (h *Handler) logRequests(c *gin.Context) {
	start := time.Now()
	c.Next()
	route := c.FullPath()
	if route == "" {
		route = "unmatched"
	}
	status := c.Writer.Status()
	elapsed := time.Since(start)
	h.deps.Metrics.observeRequest(c.Request.Method, route, status, elapsed)
	attrs := []any{
		"request_id", c.GetString(ctxRequestID),
		"method", c.Request.Method,
		"route", route,
		"status", status,
		"latency_ms", float64(elapsed.Microseconds()) / 1000,
	}
	if tid := c.GetString(ctxTransferID); tid != "" {
		attrs = append(attrs, "transfer_id", tid)
	}
	h.log.Info("request", attrs...)
}

// recoverPanics turns a panic into a logged stack and a generic 500 problem.
func (h *Handler) recoverPanics(c *gin.Context) {
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			h.log.Error("handler panicked", "request_id", c.GetString(ctxRequestID), "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			if !c.Writer.Written() {
				writeProblem(c, newProblem(http.StatusInternalServerError, CodeInternal, "an internal error occurred"))
			}
			c.Abort()
		}
	}()
	c.Next()
}

func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

func itoa(n int) string { return strconv.Itoa(n) }
