package embedmongo

import (
	"os"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// cmdHello answers hello and the legacy isMaster: a writable standalone of MongoDB 7.0. It sends
// no topologyVersion, so drivers poll (every heartbeatFrequencyMS) instead of using the
// streaming protocol, whose long-poll replies a standalone with a fixed topology gains nothing from.
func cmdHello(c *cmdCtx) (bson.D, error) {
	if client, ok := c.arg("client"); ok {
		if app, ok := bsonkit.GetPath(client, "application.name").(string); ok {
			c.conn.appName = app
		}
	}
	primaryField := "isWritablePrimary"
	if c.name != "hello" {
		primaryField = "ismaster"
	}
	r := bson.D{}
	if helloOk, _ := c.boolArg("helloOk", false); helloOk {
		r = append(r, bson.E{Key: "helloOk", Value: true})
	}
	return append(r,
		bson.E{Key: primaryField, Value: true},
		bson.E{Key: "maxBsonObjectSize", Value: int32(MaxBSONObjectSize)},
		bson.E{Key: "maxMessageSizeBytes", Value: int32(MaxMessageSizeBytes)},
		bson.E{Key: "maxWriteBatchSize", Value: int32(MaxWriteBatchSize)},
		bson.E{Key: "localTime", Value: c.now},
		bson.E{Key: "logicalSessionTimeoutMinutes", Value: int32(30)},
		bson.E{Key: "connectionId", Value: int32(c.conn.id)},
		bson.E{Key: "minWireVersion", Value: int32(0)},
		bson.E{Key: "maxWireVersion", Value: int32(MaxWireVersion)},
		bson.E{Key: "readOnly", Value: false},
	), nil
}

func cmdPing(*cmdCtx) (bson.D, error) { return bson.D{}, nil }

func cmdBuildInfo(*cmdCtx) (bson.D, error) {
	return bson.D{
		{Key: "version", Value: Version},
		{Key: "gitVersion", Value: "embedmongo"},
		{Key: "versionArray", Value: bson.A{int32(7), int32(0), int32(0), int32(0)}},
		{Key: "bits", Value: int32(64)},
		{Key: "debug", Value: false},
		{Key: "maxBsonObjectSize", Value: int32(MaxBSONObjectSize)},
		{Key: "storageEngines", Value: bson.A{"embedmongo"}},
		{Key: "modules", Value: bson.A{}},
	}, nil
}

// cmdGetParameter knows the few parameters drivers and tools ask for.
func cmdGetParameter(c *cmdCtx) (bson.D, error) {
	if c.db != "admin" {
		return nil, mongoerr.New(mongoerr.Unauthorized, "getParameter may only be run against the admin database.")
	}
	known := bson.D{
		{Key: "featureCompatibilityVersion", Value: bson.D{{Key: "version", Value: "7.0"}}},
		{Key: "authenticationMechanisms", Value: bson.A{}},
		{Key: "requireApiVersion", Value: false},
		{Key: "ttlMonitorSleepSecs", Value: int32(c.srv.opts.TTLMonitorPeriod / time.Second)},
	}
	if all, ok := c.cmd[0].Value.(string); ok && all == "*" {
		return known, nil
	}
	var r bson.D
	for _, e := range c.cmd[1:] {
		if v, ok := lookup(known, e.Key); ok {
			r = append(r, bson.E{Key: e.Key, Value: v})
		}
	}
	if len(r) == 0 {
		return nil, mongoerr.New(72, "no option found to get")
	}
	return r, nil
}

func cmdServerStatus(c *cmdCtx) (bson.D, error) {
	host, _ := os.Hostname()
	up := time.Since(c.srv.started)
	return bson.D{
		{Key: "host", Value: host},
		{Key: "version", Value: Version},
		{Key: "process", Value: "embedmongo"},
		{Key: "pid", Value: int64(os.Getpid())},
		{Key: "uptime", Value: up.Seconds()},
		{Key: "uptimeMillis", Value: up.Milliseconds()},
		{Key: "localTime", Value: c.now},
		{Key: "connections", Value: bson.D{
			{Key: "current", Value: int32(c.srv.connections())},
			{Key: "available", Value: int32(1 << 20)},
			{Key: "totalCreated", Value: c.srv.totalConn.Load()},
		}},
		{Key: "storageEngine", Value: bson.D{{Key: "name", Value: "embedmongo"}, {Key: "persistent", Value: c.srv.opts.Dir != ""}}},
	}, nil
}

// cmdEndSessions: the engine keeps no server-side session state, so ending sessions is a no-op.
func cmdConnectionStatus(*cmdCtx) (bson.D, error) {
	return bson.D{{Key: "authInfo", Value: bson.D{
		{Key: "authenticatedUsers", Value: bson.A{}},
		{Key: "authenticatedUserRoles", Value: bson.A{}},
	}}}, nil
}

func cmdWhatsMyURI(c *cmdCtx) (bson.D, error) {
	return bson.D{{Key: "you", Value: c.conn.nc.RemoteAddr().String()}}, nil
}

func cmdGetLastError(*cmdCtx) (bson.D, error) {
	return bson.D{{Key: "n", Value: int32(0)}, {Key: "err", Value: nil}}, nil
}
