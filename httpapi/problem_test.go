package httpapi

import (
	"errors"
	"fmt"
	"testing"
)

type retryableErr struct{}

func (retryableErr) Error() string   { return "connection pool was cleared" }
func (retryableErr) Retryable() bool { return true }

func TestClassifyTransientDriverErrorsAsUnavailable(t *testing.T) {
	err := fmt.Errorf("clean up markers: %w", retryableErr{})
	if p, _ := classify(err); p.Status != 503 || p.Code != CodeUnavailable {
		t.Errorf("retryable driver error: got %d %s, want 503 unavailable", p.Status, p.Code)
	}
	if p, known := classify(errors.New("boom")); p.Status != 500 || known {
		t.Errorf("unknown error: got %d (known=%v), want 500", p.Status, known)
	}
}
