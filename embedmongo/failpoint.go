package embedmongo

import (
	"math/rand/v2"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// failPoints holds the failCommand fail point, which makes chosen commands fail, hang up or
// stall exactly as mongod's testing fail point does, so fault tests can inject database errors.
type failPoints struct {
	mu sync.Mutex
	fc *failCommand
}

type failCommand struct {
	alwaysOn    bool
	times       int64 // remaining activations when > 0 (mode {times: n})
	skip        int64 // matching commands to let through first (mode {skip: n})
	probability float64

	commands          map[string]bool
	appName           string
	errorCode         int32
	errorLabels       bson.A
	closeConnection   bool
	block             time.Duration
	writeConcernError bson.D
}

// trigger reports the fail point's action for this command, or nil, consuming one activation.
func (f *failPoints) trigger(cmd, appName string) *failCommand {
	f.mu.Lock()
	defer f.mu.Unlock()
	fc := f.fc
	if fc == nil || !fc.commands[cmd] || (fc.appName != "" && fc.appName != appName) {
		return nil
	}
	if fc.skip > 0 {
		fc.skip--
		return nil
	}
	if fc.probability > 0 && rand.Float64() >= fc.probability {
		return nil
	}
	if !fc.alwaysOn {
		fc.times--
		if fc.times <= 0 {
			f.fc = nil
		}
	}
	return fc
}

// cmdConfigureFailPoint: {configureFailPoint: "failCommand", mode, data}.
func cmdConfigureFailPoint(c *cmdCtx) (bson.D, error) {
	if c.db != "admin" {
		return nil, mongoerr.New(mongoerr.Unauthorized, "configureFailPoint may only be run against the admin database.")
	}
	name, _ := c.cmd[0].Value.(string)
	if name != "failCommand" {
		return nil, mongoerr.New(mongoerr.BadValue, "Cannot find failpoint: %s", name)
	}
	mode, ok := c.arg("mode")
	if !ok {
		return nil, mongoerr.New(mongoerr.BadValue, "missing mode")
	}
	fc := &failCommand{}
	switch m := mode.(type) {
	case string:
		switch m {
		case "off":
			c.srv.fail.set(nil)
			return bson.D{}, nil
		case "alwaysOn":
			fc.alwaysOn = true
		default:
			return nil, mongoerr.New(mongoerr.BadValue, "unknown fail point mode: %s", m)
		}
	case bson.D:
		for _, e := range m {
			n, isNum := toInt(e.Value)
			switch e.Key {
			case "times":
				if !isNum || n < 0 {
					return nil, mongoerr.New(mongoerr.BadValue, "'times' must be a non-negative number")
				}
				fc.times = n
			case "skip":
				if !isNum || n < 0 {
					return nil, mongoerr.New(mongoerr.BadValue, "'skip' must be a non-negative number")
				}
				fc.skip, fc.alwaysOn = n, true
			case "activationProbability":
				p, _ := e.Value.(float64)
				if p < 0 || p > 1 {
					return nil, mongoerr.New(mongoerr.BadValue, "activationProbability must be between 0 and 1")
				}
				fc.probability, fc.alwaysOn = p, true
			default:
				return nil, mongoerr.New(mongoerr.BadValue, "unknown fail point mode field: %s", e.Key)
			}
		}
		if fc.times == 0 && !fc.alwaysOn {
			c.srv.fail.set(nil)
			return bson.D{}, nil
		}
	default:
		return nil, mongoerr.New(mongoerr.TypeMismatch, "'mode' must be a string or an object")
	}
	data, err := c.docArg("data")
	if err != nil {
		return nil, err
	}
	fc.commands = map[string]bool{}
	var blockConn bool
	var blockMS int64
	for _, e := range data {
		switch e.Key {
		case "failCommands":
			arr, _ := e.Value.(bson.A)
			for _, v := range arr {
				if s, ok := v.(string); ok {
					fc.commands[s] = true
				}
			}
		case "errorCode":
			n, _ := toInt(e.Value)
			fc.errorCode = int32(n)
		case "errorLabels":
			fc.errorLabels, _ = e.Value.(bson.A)
		case "closeConnection":
			fc.closeConnection, _ = e.Value.(bool)
		case "blockConnection":
			blockConn, _ = e.Value.(bool)
		case "blockTimeMS":
			blockMS, _ = toInt(e.Value)
		case "writeConcernError":
			fc.writeConcernError, _ = e.Value.(bson.D)
		case "appName":
			fc.appName, _ = e.Value.(string)
		}
	}
	if blockConn {
		fc.block = time.Duration(blockMS) * time.Millisecond
	}
	if len(fc.commands) == 0 {
		return nil, mongoerr.New(mongoerr.BadValue, "failCommand requires a non-empty failCommands array")
	}
	c.srv.fail.set(fc)
	return bson.D{{Key: "count", Value: int32(0)}}, nil
}

func (f *failPoints) set(fc *failCommand) {
	f.mu.Lock()
	f.fc = fc
	f.mu.Unlock()
}

func toInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case float64:
		return int64(x), true
	}
	return 0, false
}
