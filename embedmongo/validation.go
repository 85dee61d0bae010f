package embedmongo

import (
	"log/slog"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/expr"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
	"github.com/bankd/bankd/embedmongo/internal/query"
)

// Schema validation: a collection's validator (a query filter) that inserted and updated
// documents must match, with mongod's validationLevel and validationAction.

// validator is a collection's compiled validation rule for one command.
type validator struct {
	spec     bson.D
	m        *query.Matcher
	vars     expr.Vars
	moderate bool // validationLevel moderate: updates of already-invalid documents pass
	warn     bool // validationAction warn: log and accept
	log      *slog.Logger
}

// validatorFor returns the rule documents written under opts must satisfy; nil when there is
// none, validation is off or the command bypasses it. vars nil means the command's defaults.
func (c *cmdCtx) validatorFor(opts bson.D, vars expr.Vars) (*validator, error) {
	spec, _ := lookup(opts, "validator")
	d, _ := spec.(bson.D)
	if len(d) == 0 {
		return nil, nil
	}
	if bypass, _ := c.boolArg("bypassDocumentValidation", false); bypass {
		return nil, nil
	}
	level, _ := lookup(opts, "validationLevel")
	if level == "off" {
		return nil, nil
	}
	action, _ := lookup(opts, "validationAction")
	if vars == nil {
		var err error
		if vars, err = c.vars(nil); err != nil {
			return nil, err
		}
	}
	m, err := query.Compile(d, query.Options{Vars: vars})
	if err != nil {
		return nil, err
	}
	return &validator{spec: d, m: m, vars: vars, moderate: level == "moderate", warn: action == "warn", log: c.srv.log}, nil
}

// check validates doc, the new version of old (nil for an insert): DocumentValidationFailure
// (121) with mongod's errInfo when it fails.
func (v *validator) check(old, doc bson.D) error {
	if v == nil {
		return nil
	}
	ok, err := v.m.Match(doc)
	if err != nil || ok {
		return err
	}
	if old != nil && v.moderate {
		if wasValid, err := v.m.Match(old); err == nil && !wasValid {
			return nil
		}
	}
	id, _ := bsonkit.Get(doc, "_id")
	if v.warn {
		v.log.Warn("Document would fail validation", "id", id)
		return nil
	}
	e := mongoerr.New(mongoerr.DocumentValidationFailure, "Document failed validation")
	e.Extra = bson.D{{Key: "errInfo", Value: bson.D{
		{Key: "failingDocumentId", Value: id},
		{Key: "details", Value: v.explain(doc)},
	}}}
	return e
}

// explain describes why doc fails the validator, in the shape of mongod's (5.0+) details:
// the failing operator, how it was specified and why it did not match. A validator of
// several clauses is an implicit $and listing the clauses not satisfied.
func (v *validator) explain(doc bson.D) bson.D {
	if len(v.spec) == 1 {
		return v.explainClause(v.spec[0], doc)
	}
	var failed bson.A
	for i, e := range v.spec {
		m, err := query.Compile(bson.D{e}, query.Options{Vars: v.vars})
		if err != nil {
			continue
		}
		if ok, err := m.Match(doc); err == nil && !ok {
			failed = append(failed, bson.D{{Key: "index", Value: int32(i)}, {Key: "details", Value: v.explainClause(e, doc)}})
		}
	}
	return bson.D{{Key: "operatorName", Value: "$and"}, {Key: "clausesNotSatisfied", Value: failed}}
}

func (v *validator) explainClause(e bson.E, doc bson.D) bson.D {
	spec := bson.D{e}
	if len(e.Key) > 0 && e.Key[0] == '$' { // $and, $or, $expr, ...
		return bson.D{{Key: "operatorName", Value: e.Key}, {Key: "specifiedAs", Value: spec},
			{Key: "reason", Value: "expression did not match"}}
	}
	op := "$eq"
	if ops, ok := e.Value.(bson.D); ok && len(ops) > 0 && len(ops[0].Key) > 0 && ops[0].Key[0] == '$' {
		op = ops[0].Key
	}
	out := bson.D{{Key: "operatorName", Value: op}, {Key: "specifiedAs", Value: spec}}
	val := bsonkit.GetPath(doc, e.Key)
	if bsonkit.IsMissing(val) {
		return append(out, bson.E{Key: "reason", Value: "field was missing"})
	}
	reason := "comparison failed"
	if op == "$type" {
		reason = "type did not match"
	}
	return append(out,
		bson.E{Key: "reason", Value: reason},
		bson.E{Key: "consideredValue", Value: val},
		bson.E{Key: "consideredType", Value: bsonkit.TypeName(val)})
}

// checkValidatorOptions validates create/collMod's validation options as mongod does.
func checkValidatorOptions(opts bson.D) error {
	for _, e := range opts {
		switch e.Key {
		case "validator":
			d, ok := e.Value.(bson.D)
			if !ok {
				return mongoerr.New(mongoerr.TypeMismatch, "BSON field 'validator' is the wrong type '%s', expected type 'object'", typeName(e.Value))
			}
			if _, err := query.Compile(d, query.Options{Vars: expr.Vars{}}); err != nil {
				return err
			}
		case "validationLevel":
			if s, _ := e.Value.(string); s != "off" && s != "strict" && s != "moderate" {
				return mongoerr.New(mongoerr.BadValue, "Enumeration value '%v' for field 'validationLevel' is not a valid value.", e.Value)
			}
		case "validationAction":
			if s, _ := e.Value.(string); s != "error" && s != "warn" {
				return mongoerr.New(mongoerr.BadValue, "Enumeration value '%v' for field 'validationAction' is not a valid value.", e.Value)
			}
		}
	}
	return nil
}
