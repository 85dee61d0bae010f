package embedmongo

import (
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/expr"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
	"github.com/bankd/bankd/embedmongo/internal/storage"
)

// cmdCtx is what a command handler gets: the request and where it came from.
type cmdCtx struct {
	srv  *Server
	conn *conn
	db   string
	cmd  bson.D
	name string
	now  bson.DateTime // one clock reading per command, so $$NOW is stable within it
	// waits are the durability waits of the command's statement writes, made once the
	// command has run (writeDeferred): many statements, one fsync.
	waits []func() error
}

// writeDeferred runs a write on coll (one statement's, or a run of statements'); the command's
// reply waits for it to be durable (syncWrites), not the next write.
func (c *cmdCtx) writeDeferred(coll *storage.Collection, fn func(tx *storage.Tx) error) error {
	wait, err := coll.WriteDeferred(fn)
	c.waits = append(c.waits, wait)
	return err
}

// syncWrites waits until every write of the command is durable: nothing is acknowledged before.
func (c *cmdCtx) syncWrites() error {
	var first error
	for _, w := range c.waits {
		if err := w(); err != nil && first == nil {
			first = err
		}
	}
	c.waits = nil
	return first
}

// syncLater lets the command's writes become durable in the background: its client asked
// not to wait for the journal (writeConcern {j: false}). They are on the log before any later
// write, so that write's wait covers them; a failed sync fails every later write too.
func (c *cmdCtx) syncLater() {
	waits := c.waits
	c.waits = nil
	if len(waits) > 0 {
		go func() {
			for _, w := range waits {
				_ = w()
			}
		}()
	}
}

// unjournaled reports a command whose write concern says {j: false}.
func unjournaled(cmd bson.D) bool {
	wc, _ := lookup(cmd, "writeConcern")
	d, _ := wc.(bson.D)
	j, ok := lookup(d, "j")
	return ok && j == false
}

// handler runs a command and returns the reply fields; "ok: 1" is appended by dispatch.
type handler func(*cmdCtx) (bson.D, error)

// commands is the command table, alphabetical; anything else is CommandNotFound.
var commands map[string]handler

func init() {
	commands = map[string]handler{
		"aggregate":          cmdAggregate,
		"buildInfo":          cmdBuildInfo,
		"buildinfo":          cmdBuildInfo,
		"collMod":            cmdCollMod,
		"collStats":          cmdCollStats,
		"configureFailPoint": cmdConfigureFailPoint,
		"connectionStatus":   cmdConnectionStatus,
		"count":              cmdCount,
		"create":             cmdCreate,
		"createIndexes":      cmdCreateIndexes,
		"dbStats":            cmdDBStats,
		"delete":             cmdDelete,
		"distinct":           cmdDistinct,
		"drop":               cmdDrop,
		"dropDatabase":       cmdDropDatabase,
		"dropIndexes":        cmdDropIndexes,
		"endSessions":        cmdEndSessions,
		"find":               cmdFind,
		"findAndModify":      cmdFindAndModify,
		"findandmodify":      cmdFindAndModify,
		"getLastError":       cmdGetLastError,
		"getMore":            cmdGetMore,
		"getParameter":       cmdGetParameter,
		"hello":              cmdHello,
		"insert":             cmdInsert,
		"isMaster":           cmdHello,
		"ismaster":           cmdHello,
		"killAllSessions":    cmdKillAllSessions,
		"killCursors":        cmdKillCursors,
		"listCollections":    cmdListCollections,
		"listDatabases":      cmdListDatabases,
		"listIndexes":        cmdListIndexes,
		"ping":               cmdPing,
		"serverStatus":       cmdServerStatus,
		"update":             cmdUpdate,
		"whatsmyuri":         cmdWhatsMyURI,
	}
}

// dispatch routes a command to its handler, applying the failCommand fail point first. A panic
// in a handler becomes an InternalError reply: a bad request must never take the process down.
func (s *Server) dispatch(c *conn, db string, cmd bson.D, legacy bool) (reply bson.D, err error) {
	if len(cmd) == 0 {
		return errorReply(mongoerr.New(mongoerr.FailedToParse, "empty command")), nil
	}
	name := cmd[0].Key
	h, ok := commands[name]
	if !ok {
		return errorReply(mongoerr.New(mongoerr.CommandNotFound, "no such command: '%s'", name)), nil
	}
	var wce bson.D
	if name != "configureFailPoint" {
		if fp := s.fail.trigger(name, c.appName); fp != nil {
			if fp.block > 0 {
				time.Sleep(fp.block)
			}
			if fp.closeConnection {
				return nil, errCloseConn
			}
			if fp.errorCode != 0 {
				e := mongoerr.New(fp.errorCode, "Failing command via 'failCommand' failpoint")
				r := errorReply(e)
				if len(fp.errorLabels) > 0 {
					r = append(r, bson.E{Key: "errorLabels", Value: fp.errorLabels})
				}
				return r, nil
			}
			wce = fp.writeConcernError
		}
	}
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("command panicked", "command", name, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			reply, err = errorReply(mongoerr.New(mongoerr.InternalError, "internal error executing %s", name)), nil
		}
	}()
	now := time.Now()
	if lsid, ok := lookup(cmd, "lsid"); ok {
		s.sessions.touch(lsid, now)
	}
	ctx := &cmdCtx{srv: s, conn: c, db: db, cmd: cmd, name: name, now: bson.NewDateTimeFromTime(now)}
	defer func() { _ = ctx.syncWrites() }() // a panicking command still releases its writes
	out, err := h(ctx)
	if unjournaled(cmd) {
		ctx.syncLater()
	} else if serr := ctx.syncWrites(); serr != nil {
		err = serr // a write that is not durable is not acknowledged, whatever else happened
	}
	if err != nil {
		return errorReply(mongoerr.As(err)), nil
	}
	if wce != nil {
		out = append(out, bson.E{Key: "writeConcernError", Value: wce})
	}
	return append(out, bson.E{Key: "ok", Value: 1.0}), nil
}

func errorReply(e *mongoerr.Error) bson.D {
	r := bson.D{{Key: "ok", Value: 0.0}, {Key: "errmsg", Value: e.Msg}, {Key: "code", Value: e.Code}, {Key: "codeName", Value: e.Name}}
	return append(r, e.Extra...)
}

// vars returns the expression variables for this command: $$NOW and the command's `let`.
func (c *cmdCtx) vars(let bson.D) (expr.Vars, error) {
	v := expr.Vars{"NOW": c.now}
	for _, e := range let {
		if err := validateVarName(e.Key); err != nil {
			return nil, err
		}
		val, err := expr.Eval(e.Value, bson.D{}, v)
		if err != nil {
			return nil, err
		}
		v[e.Key] = val
	}
	return v, nil
}

// validateVarName applies mongod's rule for user variables: they start with a lowercase letter
// or a non-ASCII character, so they can never shadow system variables like NOW or ROOT.
func validateVarName(name string) error {
	if name == "" {
		return mongoerr.New(16866, "empty variable names are not allowed")
	}
	if c := name[0]; !(c >= 'a' && c <= 'z' || c >= 0x80) {
		return mongoerr.New(16870, "'%s' starts with an invalid character for a user variable name", name)
	}
	if strings.ContainsAny(name, ".$") {
		return mongoerr.New(16871, "'%s' contains an invalid character for a variable name", name)
	}
	return nil
}

// Argument helpers. mongod accepts any numeric type where it wants a number, and numbers where
// it wants a bool.

func lookup(d bson.D, key string) (any, bool) {
	for _, e := range d {
		if e.Key == key {
			return e.Value, true
		}
	}
	return nil, false
}

func (c *cmdCtx) arg(key string) (any, bool) { return lookup(c.cmd, key) }

func (c *cmdCtx) boolArg(key string, def bool) (bool, error) {
	v, ok := c.arg(key)
	if !ok || v == nil {
		return def, nil
	}
	switch x := v.(type) {
	case bool:
		return x, nil
	case int32:
		return x != 0, nil
	case int64:
		return x != 0, nil
	case float64:
		return x != 0, nil
	}
	return false, typeMismatch(c.name, key, v, "bool")
}

func (c *cmdCtx) intArg(key string, def int64) (int64, error) {
	v, ok := c.arg(key)
	if !ok || v == nil {
		return def, nil
	}
	switch x := v.(type) {
	case int32:
		return int64(x), nil
	case int64:
		return x, nil
	case float64:
		return int64(x), nil
	}
	return 0, typeMismatch(c.name, key, v, "long")
}

func (c *cmdCtx) docArg(key string) (bson.D, error) {
	v, ok := c.arg(key)
	if !ok || v == nil {
		return nil, nil
	}
	d, ok := v.(bson.D)
	if !ok {
		return nil, typeMismatch(c.name, key, v, "object")
	}
	return d, nil
}

func (c *cmdCtx) arrayArg(key string) (bson.A, bool, error) {
	v, ok := c.arg(key)
	if !ok {
		return nil, false, nil
	}
	a, ok := v.(bson.A)
	if !ok {
		return nil, true, typeMismatch(c.name, key, v, "array")
	}
	return a, true, nil
}

func typeMismatch(cmd, field string, v any, want string) error {
	return mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s.%s' is the wrong type '%s', expected type '%s'", cmd, field, typeName(v), want)
}

func typeName(v any) string {
	switch v.(type) {
	case bson.D:
		return "object"
	case bson.A:
		return "array"
	case string:
		return "string"
	case float64:
		return "double"
	case int32:
		return "int"
	case int64:
		return "long"
	case bool:
		return "bool"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

// collectionArg returns the collection named by the command's first field.
func (c *cmdCtx) collectionArg() (string, error) {
	name, ok := c.cmd[0].Value.(string)
	if !ok {
		return "", mongoerr.New(mongoerr.InvalidNamespace, "collection name has invalid type %s", typeName(c.cmd[0].Value))
	}
	if err := validateCollectionName(c.db, name); err != nil {
		return "", err
	}
	return name, nil
}

func validateCollectionName(db, name string) error {
	if name == "" || strings.ContainsAny(name, "\x00$") || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "system.") && name != "system.js" && name != "system.views" {
		return mongoerr.New(mongoerr.InvalidNamespace, "Invalid namespace specified '%s.%s'", db, name)
	}
	if err := validateDBName(db); err != nil {
		return err
	}
	return nil
}

func validateDBName(db string) error {
	if db == "" || len(db) >= 64 || strings.ContainsAny(db, "/\\. \"$\x00") {
		return mongoerr.New(mongoerr.InvalidNamespace, "Invalid database name: '%s'", db)
	}
	return nil
}
