package spectest

import (
	"errors"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// errorDetails gathers what a server-derived error carries.
type errorDetails struct {
	server    bool
	codes     []int64
	codeNames []string
	messages  []string
	labels    []string
	response  bson.Raw // the server's reply (or write error document)
}

func extractError(err error) errorDetails {
	var d errorDetails
	var ce mongo.CommandError
	var we mongo.WriteException
	var bwe mongo.BulkWriteException
	var cbe mongo.ClientBulkWriteException
	switch {
	case errors.As(err, &cbe):
		// Per the spec, only the top-level error counts for errorCode/errorContains; write errors
		// and write concern errors are asserted through writeErrors/writeConcernErrors.
		d.server = true
		if cbe.WriteError != nil {
			d.codes = append(d.codes, int64(cbe.WriteError.Code))
			d.messages = append(d.messages, cbe.WriteError.Message)
			d.response = cbe.WriteError.Raw
			if name, ok := cbe.WriteError.Raw.Lookup("codeName").StringValueOK(); ok {
				d.codeNames = append(d.codeNames, name)
			}
		}
	case errors.As(err, &bwe):
		d.server = true
		for _, e := range bwe.WriteErrors {
			d.codes = append(d.codes, int64(e.Code))
			d.messages = append(d.messages, e.Message)
			d.response = e.Raw
			if name, ok := e.Raw.Lookup("codeName").StringValueOK(); ok {
				d.codeNames = append(d.codeNames, name)
			}
		}
		if wce := bwe.WriteConcernError; wce != nil {
			d.codes = append(d.codes, int64(wce.Code))
			d.codeNames = append(d.codeNames, wce.Name)
			d.messages = append(d.messages, wce.Message)
		}
		d.labels = bwe.Labels
	case errors.As(err, &we):
		d.server = true
		for _, e := range we.WriteErrors {
			d.codes = append(d.codes, int64(e.Code))
			d.messages = append(d.messages, e.Message)
			if name, ok := e.Raw.Lookup("codeName").StringValueOK(); ok {
				d.codeNames = append(d.codeNames, name)
			}
		}
		if wce := we.WriteConcernError; wce != nil {
			d.codes = append(d.codes, int64(wce.Code))
			d.codeNames = append(d.codeNames, wce.Name)
			d.messages = append(d.messages, wce.Message)
		}
		d.labels = we.Labels
		d.response = we.Raw
	case errors.As(err, &ce):
		d.server = true
		d.codes = []int64{int64(ce.Code)}
		d.codeNames = []string{ce.Name}
		d.messages = []string{ce.Message}
		d.labels = ce.Labels
		d.response = ce.Raw
	}
	// Network errors reach us as CommandErrors too, but the spec counts them as client errors.
	if mongo.IsNetworkError(err) {
		d.server = false
	}
	return d
}

// checkError applies an expectedError to the error an operation returned.
func (tr *testRun) checkError(exp *expectedError, res opResult) error {
	err := res.err
	if err == nil {
		return fmt.Errorf("expected an error, got success with result %s", show(res.value))
	}
	d := extractError(err)
	if exp.IsClientError != nil && *exp.IsClientError == d.server {
		return fmt.Errorf("expected isClientError=%v, got %s error: %v", *exp.IsClientError, origin(d), err)
	}
	if exp.IsTimeoutError != nil && *exp.IsTimeoutError != mongo.IsTimeout(err) {
		return fmt.Errorf("expected isTimeoutError=%v, got: %v", *exp.IsTimeoutError, err)
	}
	if exp.ErrorContains != nil {
		want := strings.ToLower(*exp.ErrorContains)
		found := strings.Contains(strings.ToLower(err.Error()), want)
		for _, m := range d.messages {
			found = found || strings.Contains(strings.ToLower(m), want)
		}
		if !found {
			return fmt.Errorf("expected error containing %q, got: %v", *exp.ErrorContains, err)
		}
	}
	if exp.ErrorCode != nil || exp.ErrorCodeName != nil || exp.ErrorLabelsContain != nil || exp.ErrorLabelsOmit != nil {
		if !d.server {
			return fmt.Errorf("expected a server error (code/codeName/labels), got a client error: %v", err)
		}
	}
	if exp.ErrorCode != nil {
		found := false
		for _, c := range d.codes {
			found = found || c == *exp.ErrorCode
		}
		if !found {
			return fmt.Errorf("expected error code %d, got codes %v: %v", *exp.ErrorCode, d.codes, err)
		}
	}
	if exp.ErrorCodeName != nil {
		found := false
		for _, n := range d.codeNames {
			found = found || strings.EqualFold(n, *exp.ErrorCodeName)
		}
		if !found {
			return fmt.Errorf("expected error code name %q, got %v: %v", *exp.ErrorCodeName, d.codeNames, err)
		}
	}
	for _, l := range exp.ErrorLabelsContain {
		if !hasLabel(err, l) {
			return fmt.Errorf("expected error label %q, got labels %v: %v", l, d.labels, err)
		}
	}
	for _, l := range exp.ErrorLabelsOmit {
		if hasLabel(err, l) {
			return fmt.Errorf("expected no error label %q, got labels %v: %v", l, d.labels, err)
		}
	}
	if exp.ErrorResponse != nil {
		if d.response == nil {
			return fmt.Errorf("expected a server response matching %s, error has none: %v", show(exp.ErrorResponse), err)
		}
		var resp bson.D
		if uerr := bson.Unmarshal(d.response, &resp); uerr != nil {
			return uerr
		}
		if merr := tr.matcher().match(exp.ErrorResponse, resp, true); merr != nil {
			return fmt.Errorf("errorResponse: %w", merr)
		}
	}
	if exp.ExpectResult.Type != 0 {
		if merr := tr.matchResult(rawToAny(exp.ExpectResult), res); merr != nil {
			return fmt.Errorf("error's partial result: %w", merr)
		}
	}
	if exp.WriteErrors != nil || exp.WriteConcernErrors != nil {
		var cbe mongo.ClientBulkWriteException
		if !errors.As(err, &cbe) {
			return fmt.Errorf("expected a client bulk write exception, got %T: %v", err, err)
		}
		if exp.WriteErrors != nil {
			if err := tr.checkWriteErrors(exp.WriteErrors, cbe.WriteErrors); err != nil {
				return err
			}
		}
		if exp.WriteConcernErrors != nil {
			if len(exp.WriteConcernErrors) != len(cbe.WriteConcernErrors) {
				return fmt.Errorf("expected %d write concern errors, got %d: %v", len(exp.WriteConcernErrors), len(cbe.WriteConcernErrors), cbe.WriteConcernErrors)
			}
			for i, e := range exp.WriteConcernErrors {
				w := cbe.WriteConcernErrors[i]
				act := bson.D{{Key: "code", Value: int32(w.Code)}, {Key: "message", Value: w.Message}}
				if w.Name != "" {
					act = append(act, bson.E{Key: "codeName", Value: w.Name})
				}
				if w.Details != nil {
					act = append(act, bson.E{Key: "details", Value: w.Details})
				}
				if merr := tr.matcher().match(e, act, true); merr != nil {
					return fmt.Errorf("writeConcernErrors[%d]: %w", i, merr)
				}
			}
		}
	}
	return nil
}

func (tr *testRun) checkWriteErrors(exp bson.D, got map[int]mongo.WriteError) error {
	if len(exp) != len(got) {
		return fmt.Errorf("expected %d write errors %s, got %d: %v", len(exp), show(exp), len(got), got)
	}
	for _, e := range exp {
		var idx int
		if _, err := fmt.Sscan(e.Key, &idx); err != nil {
			return fmt.Errorf("writeErrors key %q is not an index", e.Key)
		}
		w, ok := got[idx]
		if !ok {
			return fmt.Errorf("expected a write error at index %d, got %v", idx, got)
		}
		act := bson.D{{Key: "code", Value: int32(w.Code)}, {Key: "message", Value: w.Message}}
		if w.Details != nil {
			act = append(act, bson.E{Key: "details", Value: w.Details})
		}
		if err := tr.matcher().match(e.Value, act, true); err != nil {
			return fmt.Errorf("writeErrors[%d]: %w", idx, err)
		}
	}
	return nil
}

func hasLabel(err error, label string) bool {
	var le mongo.LabeledError
	return errors.As(err, &le) && le.HasErrorLabel(label)
}

func origin(d errorDetails) string {
	if d.server {
		return "a server"
	}
	return "a client"
}
