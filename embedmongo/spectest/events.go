package spectest

import (
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// checkEvents asserts expectEvents against what each client observed.
func (tr *testRun) checkEvents(observed map[string][]observedEvent) error {
	for _, exp := range tr.test.ExpectEvents {
		if exp.EventType != "" && exp.EventType != "command" {
			return fmt.Errorf("expectEvents: unsupported eventType %q", exp.EventType)
		}
		got, ok := observed[exp.Client]
		if !ok {
			return fmt.Errorf("expectEvents: unknown client %q", exp.Client)
		}
		if len(got) < len(exp.Events) || (!exp.IgnoreExtraEvents && len(got) != len(exp.Events)) {
			return fmt.Errorf("expectEvents for %s: expected %d events, got %d:\n%s", exp.Client, len(exp.Events), len(got), describeEvents(got))
		}
		for i, e := range exp.Events {
			if err := tr.checkEvent(e, got[i]); err != nil {
				return fmt.Errorf("expectEvents for %s, event %d: %w\n  observed events:\n%s", exp.Client, i, err, describeEvents(got))
			}
		}
	}
	return nil
}

func (tr *testRun) checkEvent(exp bson.D, got observedEvent) error {
	if len(exp) != 1 {
		return fmt.Errorf("expected event must have one key, got %s", show(exp))
	}
	kind := exp[0].Key
	if kind != got.kind {
		return fmt.Errorf("expected %s, got %s %s", kind, got.kind, got.name)
	}
	spec, ok := exp[0].Value.(bson.D)
	if !ok {
		return fmt.Errorf("%s must be a document", kind)
	}
	a := newArgs(kind, spec)
	if v, ok := a.take("commandName"); ok && v != got.name {
		return fmt.Errorf("%s: expected commandName %s, got %s", kind, show(v), got.name)
	}
	if v, ok := a.take("databaseName"); ok && v != got.db {
		return fmt.Errorf("%s %s: expected databaseName %s, got %s", kind, got.name, show(v), got.db)
	}
	if kind == "commandStartedEvent" {
		if v, ok := a.take("command"); ok {
			var cmd bson.D
			if err := bson.Unmarshal(got.command, &cmd); err != nil {
				return err
			}
			if err := tr.matcher().match(v, cmd, true); err != nil {
				return fmt.Errorf("%s %s command: %w\n    actual command: %s", kind, got.name, err, show(cmd))
			}
		}
	}
	if kind == "commandSucceededEvent" {
		if v, ok := a.take("reply"); ok {
			var reply bson.D
			if err := bson.Unmarshal(got.reply, &reply); err != nil {
				return err
			}
			if err := tr.matcher().match(v, reply, true); err != nil {
				return fmt.Errorf("%s %s reply: %w\n    actual reply: %s", kind, got.name, err, show(reply))
			}
		}
	}
	return a.finish()
}

func describeEvents(evs []observedEvent) string {
	var b strings.Builder
	for i, e := range evs {
		var body any
		switch {
		case e.command != nil:
			var d bson.D
			_ = bson.Unmarshal(e.command, &d)
			body = d
		case e.reply != nil:
			var d bson.D
			_ = bson.Unmarshal(e.reply, &d)
			body = d
		default:
			body = fmt.Sprint(e.failure)
		}
		fmt.Fprintf(&b, "    [%d] %s %s (db %s): %s\n", i, e.kind, e.name, e.db, show(body))
	}
	return strings.TrimRight(b.String(), "\n")
}
