package spectest

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

func (tr *testRun) databaseOp(ctx context.Context, db *mongo.Database, name string, a *args) (opResult, error) {
	switch name {
	case "aggregate":
		return aggregate(ctx, a, func(p any, o *options.AggregateOptionsBuilder) (*mongo.Cursor, error) {
			return db.Aggregate(ctx, p, o)
		})
	case "createCollection":
		coll := a.str("collection")
		if a.has("viewOn") {
			viewOn := a.str("viewOn")
			pipeline := a.array("pipeline")
			if pipeline == nil {
				pipeline = bson.A{}
			}
			if err := a.finish(); err != nil {
				return opResult{}, err
			}
			return opResult{value: absent, err: db.CreateView(ctx, coll, viewOn, pipeline)}, nil
		}
		o := options.CreateCollection()
		if v, ok := a.doc("validator"); ok {
			o.SetValidator(v)
		}
		if err := a.finish(); err != nil {
			return opResult{}, err
		}
		return opResult{value: absent, err: db.CreateCollection(ctx, coll, o)}, nil
	case "dropCollection":
		coll := a.str("collection")
		if err := a.finish(); err != nil {
			return opResult{}, err
		}
		return opResult{value: absent, err: db.Collection(coll).Drop(ctx)}, nil
	case "modifyCollection":
		// The driver has no collMod helper; send the command as the spec's operation describes.
		cmd := bson.D{{Key: "collMod", Value: a.str("collection")}}
		for _, k := range []string{"validator", "validationLevel", "validationAction", "index",
			"expireAfterSeconds", "changeStreamPreAndPostImages", "viewOn", "pipeline"} {
			if v, ok := a.take(k); ok {
				cmd = append(cmd, bson.E{Key: k, Value: v})
			}
		}
		if err := a.finish(); err != nil {
			return opResult{}, err
		}
		return opResult{value: absent, err: db.RunCommand(ctx, cmd).Err()}, nil
	case "runCommand":
		cmd, _ := a.doc("command")
		a.str("commandName")
		if err := a.finish(); err != nil {
			return opResult{}, err
		}
		var reply bson.D
		err := db.RunCommand(ctx, cmd).Decode(&reply)
		return docResult(reply, err), nil
	}
	return opResult{}, fmt.Errorf("unsupported database operation %q", name)
}
