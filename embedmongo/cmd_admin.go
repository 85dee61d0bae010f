package embedmongo

import (
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/agg"
	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/collation"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
	"github.com/bankd/bankd/embedmongo/internal/query"
	"github.com/bankd/bankd/embedmongo/internal/storage"
)

// genericArgs are fields any command may carry that are not options of the command itself.
var genericArgs = map[string]bool{
	"$db": true, "lsid": true, "$clusterTime": true, "$readPreference": true, "writeConcern": true,
	"readConcern": true, "comment": true, "maxTimeMS": true, "apiVersion": true, "apiStrict": true,
	"apiDeprecationErrors": true, "txnNumber": true, "autocommit": true, "startTransaction": true,
}

func cmdCreate(c *cmdCtx) (bson.D, error) {
	name, err := c.collectionArg()
	if err != nil {
		return nil, err
	}
	var opts bson.D
	for _, e := range c.cmd[1:] {
		if genericArgs[e.Key] {
			continue
		}
		switch e.Key {
		case "timeseries":
			return nil, mongoerr.New(mongoerr.CommandNotSupported, "time-series collections are not supported by embedmongo")
		case "collation":
			coll, err := collation.Parse(e.Value)
			if err != nil {
				return nil, err
			}
			if coll == nil {
				continue // simple is the default: mongod does not record it
			}
			e.Value = coll.Spec()
		}
		opts = append(opts, e)
	}
	if err := checkValidatorOptions(opts); err != nil {
		return nil, err
	}
	if _, isView := lookup(opts, "viewOn"); isView {
		if err := checkViewOptions(opts); err != nil {
			return nil, err
		}
	} else if _, ok := lookup(opts, "pipeline"); ok {
		return nil, mongoerr.New(mongoerr.InvalidOptions, "'pipeline' requires 'viewOn' to also be specified")
	}
	if err := c.srv.store.CreateCollection(c.db, name, opts); err != nil {
		return nil, err
	}
	return bson.D{}, nil
}

// checkViewOptions validates a view definition: viewOn names a collection of the same
// database, pipeline is a valid pipeline without $out/$merge, and nothing else is given.
func checkViewOptions(opts bson.D) error {
	for _, e := range opts {
		switch e.Key {
		case "viewOn":
			s, ok := e.Value.(string)
			if !ok {
				return typeMismatch("create", "viewOn", e.Value, "string")
			}
			if s == "" {
				return mongoerr.New(mongoerr.BadValue, "'viewOn' cannot be empty")
			}
		case "pipeline":
			if _, ok := e.Value.(bson.A); !ok {
				return typeMismatch("create", "pipeline", e.Value, "array")
			}
			stages, err := pipelineStages(e.Value)
			if err != nil {
				return err
			}
			if agg.IsWriteStage(stages) {
				return &mongoerr.Error{Code: 167, Name: "OptionNotSupportedOnView", Msg: "$out and $merge cannot be used in a view definition"}
			}
			if err := agg.Validate(stages); err != nil {
				return err
			}
		case "collation":
		default:
			return mongoerr.New(mongoerr.InvalidOptions, "option not supported on a view: %s", e.Key)
		}
	}
	return nil
}

func cmdDrop(c *cmdCtx) (bson.D, error) {
	name, err := c.collectionArg()
	if err != nil {
		return nil, err
	}
	coll := c.srv.store.Collection(c.db, name)
	nIndexes := 0
	if coll != nil && !isView(collOptions(coll)) {
		nIndexes = len(coll.Indexes())
	}
	// MongoDB 7.0 answers ok for a collection that does not exist.
	if _, err := c.srv.store.DropCollection(c.db, name); err != nil {
		return nil, err
	}
	return bson.D{{Key: "nIndexesWas", Value: int32(nIndexes)}, {Key: "ns", Value: c.db + "." + name}}, nil
}

func cmdDropDatabase(c *cmdCtx) (bson.D, error) {
	if err := c.srv.store.DropDatabase(c.db); err != nil {
		return nil, err
	}
	return bson.D{{Key: "dropped", Value: c.db}}, nil
}

func cmdListDatabases(c *cmdCtx) (bson.D, error) {
	if c.db != "admin" {
		return nil, mongoerr.New(mongoerr.Unauthorized, "listDatabases may only be run against the admin database.")
	}
	filter, err := c.docArg("filter")
	if err != nil {
		return nil, err
	}
	nameOnly, _ := c.boolArg("nameOnly", false)
	m, err := query.Compile(filter, query.Options{})
	if err != nil {
		return nil, err
	}
	dbs := bson.A{}
	var total int64
	for _, info := range c.srv.store.ListDatabases() {
		d := bson.D{{Key: "name", Value: info.Name}}
		if !nameOnly {
			d = append(d, bson.E{Key: "sizeOnDisk", Value: info.SizeOnDisk}, bson.E{Key: "empty", Value: info.Empty})
		}
		if ok, err := m.Match(d); err != nil {
			return nil, err
		} else if !ok {
			continue
		}
		total += info.SizeOnDisk
		dbs = append(dbs, d)
	}
	r := bson.D{{Key: "databases", Value: dbs}}
	if !nameOnly {
		r = append(r, bson.E{Key: "totalSize", Value: total}, bson.E{Key: "totalSizeMb", Value: total >> 20})
	}
	return r, nil
}

func cmdListCollections(c *cmdCtx) (bson.D, error) {
	if err := validateDBName(c.db); err != nil {
		return nil, err
	}
	filter, err := c.docArg("filter")
	if err != nil {
		return nil, err
	}
	nameOnly, _ := c.boolArg("nameOnly", false)
	cursorOpt, err := c.docArg("cursor")
	if err != nil {
		return nil, err
	}
	var batchSize int64
	if v, ok := lookup(cursorOpt, "batchSize"); ok {
		batchSize, _ = toInt(v)
	}
	m, err := query.Compile(filter, query.Options{})
	if err != nil {
		return nil, err
	}
	var docs []bson.D
	for _, info := range c.srv.store.ListCollections(c.db) {
		opts := info.Options
		if opts == nil {
			opts = bson.D{}
		}
		if isView(opts) {
			d := bson.D{{Key: "name", Value: info.Name}, {Key: "type", Value: "view"}}
			if !nameOnly {
				d = append(d,
					bson.E{Key: "options", Value: opts},
					bson.E{Key: "info", Value: bson.D{{Key: "readOnly", Value: true}}})
			}
			if ok, err := m.Match(d); err != nil {
				return nil, err
			} else if ok {
				docs = append(docs, d)
			}
			continue
		}
		d := bson.D{{Key: "name", Value: info.Name}, {Key: "type", Value: "collection"}}
		if !nameOnly {
			d = append(d,
				bson.E{Key: "options", Value: opts},
				bson.E{Key: "info", Value: bson.D{{Key: "readOnly", Value: false}, {Key: "uuid", Value: info.UUID}}},
				bson.E{Key: "idIndex", Value: bson.D{{Key: "v", Value: int32(2)}, {Key: "key", Value: bson.D{{Key: "_id", Value: int32(1)}}}, {Key: "name", Value: "_id_"}}},
			)
		}
		if ok, err := m.Match(d); err != nil {
			return nil, err
		} else if ok {
			docs = append(docs, d)
		}
	}
	return c.srv.cursorReply(c.db+".$cmd.listCollections", docs, batchSize, false), nil
}

// cmdCollMod changes a collection's validation options or a view's definition, durably.
// Index options (index, expireAfterSeconds) and changeStreamPreAndPostImages are accepted
// and ignored.
func cmdCollMod(c *cmdCtx) (bson.D, error) {
	name, err := c.collectionArg()
	if err != nil {
		return nil, err
	}
	coll := c.srv.store.Collection(c.db, name)
	if coll == nil {
		return nil, mongoerr.New(mongoerr.NamespaceNotFound, "ns does not exist: %s.%s", c.db, name)
	}
	view := isView(collOptions(coll))
	var changes bson.D
	for _, e := range c.cmd[1:] {
		if genericArgs[e.Key] {
			continue
		}
		switch e.Key {
		case "validator", "validationLevel", "validationAction":
			if view {
				return nil, mongoerr.New(mongoerr.InvalidOptions, "option not supported on a view: %s", e.Key)
			}
			changes = append(changes, e)
		case "viewOn", "pipeline":
			if !view {
				return nil, mongoerr.New(mongoerr.InvalidOptions, "option only supported on a view: %s", e.Key)
			}
			changes = append(changes, e)
		case "index", "changeStreamPreAndPostImages", "expireAfterSeconds":
		default:
			return nil, mongoerr.New(mongoerr.InvalidOptions, "unknown option to collMod: %s", e.Key)
		}
	}
	if err := checkValidatorOptions(changes); err != nil {
		return nil, err
	}
	if len(changes) == 0 {
		return bson.D{}, nil
	}
	opts := bsonkit.CopyDoc(collOptions(coll))
	for _, e := range changes {
		opts = bsonkit.Set(opts, e.Key, e.Value)
	}
	if view {
		if err := checkViewOptions(opts); err != nil {
			return nil, err
		}
	}
	if err := coll.SetOptions(opts); err != nil {
		return nil, err
	}
	return bson.D{}, nil
}

func cmdCreateIndexes(c *cmdCtx) (bson.D, error) {
	name, err := c.collectionArg()
	if err != nil {
		return nil, err
	}
	list, present, err := c.arrayArg("indexes")
	if err != nil {
		return nil, err
	}
	if !present {
		return nil, mongoerr.New(40414, "BSON field 'createIndexes.indexes' is missing but a required field")
	}
	if len(list) == 0 {
		return nil, mongoerr.New(mongoerr.BadValue, "Must specify at least one index to create")
	}
	specs := make([]storage.IndexSpec, 0, len(list))
	for _, v := range list {
		d, ok := v.(bson.D)
		if !ok {
			return nil, mongoerr.New(mongoerr.TypeMismatch, "The elements of the 'indexes' array must be objects")
		}
		spec, err := parseIndexSpec(d)
		if err != nil {
			return nil, err
		}
		specs = append(specs, spec)
	}
	existed := c.srv.store.Collection(c.db, name) != nil
	coll, err := c.srv.store.CollectionOrCreate(c.db, name)
	if err != nil {
		return nil, err
	}
	if isView(collOptions(coll)) {
		return nil, errOnView(c.db, name)
	}
	before := len(coll.Indexes())
	created, err := coll.CreateIndexes(specs)
	if err != nil {
		return nil, err
	}
	r := bson.D{
		{Key: "numIndexesBefore", Value: int32(before)},
		{Key: "numIndexesAfter", Value: int32(before + created)},
		{Key: "createdCollectionAutomatically", Value: !existed},
	}
	if created == 0 {
		r = append(r, bson.E{Key: "note", Value: "all indexes already exist"})
	}
	return r, nil
}

func parseIndexSpec(d bson.D) (storage.IndexSpec, error) {
	spec := storage.IndexSpec{}
	full := bson.D{{Key: "v", Value: int32(2)}}
	for _, e := range d {
		switch e.Key {
		case "key":
			key, ok := e.Value.(bson.D)
			if !ok || len(key) == 0 {
				return spec, mongoerr.New(mongoerr.CannotCreateIndex, "Index keys cannot be empty.")
			}
			for _, k := range key {
				switch v := k.Value.(type) {
				case int32, int64, float64:
					if n, _ := toInt(v); n == 0 {
						return spec, mongoerr.New(mongoerr.CannotCreateIndex, "Values in the index key pattern can't be 0: %v", key)
					}
				case string:
					return spec, mongoerr.New(mongoerr.CannotCreateIndex, "index type '%s' is not supported by embedmongo", v)
				default:
					return spec, mongoerr.New(mongoerr.CannotCreateIndex, "Values in v:2 index key pattern cannot be of type %s. Only numbers > 0, numbers < 0, and strings are allowed.", typeName(v))
				}
			}
			spec.Key = key
		case "name":
			n, ok := e.Value.(string)
			if !ok || n == "" {
				return spec, mongoerr.New(mongoerr.CannotCreateIndex, "The index name must be a non-empty string")
			}
			spec.Name = n
		case "unique":
			spec.Unique = truthy(e.Value)
		case "sparse":
			spec.Sparse = truthy(e.Value)
		case "expireAfterSeconds":
			n, ok := toInt(e.Value)
			if !ok || n < 0 {
				return spec, mongoerr.New(mongoerr.CannotCreateIndex, "TTL index 'expireAfterSeconds' option must be a non-negative number")
			}
			spec.ExpireAfterSeconds = &n
		case "partialFilterExpression":
			pf, ok := e.Value.(bson.D)
			if !ok {
				return spec, mongoerr.New(mongoerr.CannotCreateIndex, "'partialFilterExpression' for an index must be a document")
			}
			if _, err := query.Compile(pf, query.Options{}); err != nil {
				return spec, err
			}
			spec.PartialFilterExpression = pf
		case "v", "ns", "background":
			continue
		case "hidden", "collation", "weights", "default_language", "language_override", "textIndexVersion", "2dsphereIndexVersion", "bits", "min", "max", "wildcardProjection", "storageEngine":
		default:
			return spec, mongoerr.New(mongoerr.InvalidIndexSpecificationOption, "The field '%s' is not valid for an index specification. Specification: %v", e.Key, d)
		}
		full = append(full, e)
	}
	if spec.Key == nil {
		return spec, mongoerr.New(mongoerr.FailedToParse, "Error in specification %v :: caused by :: The 'key' field is a required property of an index specification", d)
	}
	if spec.Name == "" {
		return spec, mongoerr.New(mongoerr.FailedToParse, "Error in specification %v :: caused by :: The 'name' field is a required property of an index specification", d)
	}
	spec.Spec = full
	return spec, nil
}

func cmdListIndexes(c *cmdCtx) (bson.D, error) {
	name, err := c.collectionArg()
	if err != nil {
		return nil, err
	}
	coll := c.srv.store.Collection(c.db, name)
	if coll == nil {
		return nil, mongoerr.New(mongoerr.NamespaceNotFound, "ns does not exist: %s.%s", c.db, name)
	}
	if isView(collOptions(coll)) {
		return nil, errOnView(c.db, name)
	}
	var docs []bson.D
	for _, ix := range coll.Indexes() {
		docs = append(docs, ix.Spec)
	}
	cursorOpt, _ := c.docArg("cursor")
	var batchSize int64
	if v, ok := lookup(cursorOpt, "batchSize"); ok {
		batchSize, _ = toInt(v)
	}
	return c.srv.cursorReply(c.db+"."+name, docs, batchSize, false), nil
}

func cmdDropIndexes(c *cmdCtx) (bson.D, error) {
	name, err := c.collectionArg()
	if err != nil {
		return nil, err
	}
	coll := c.srv.store.Collection(c.db, name)
	if coll == nil {
		return nil, mongoerr.New(mongoerr.NamespaceNotFound, "ns not found %s.%s", c.db, name)
	}
	if isView(collOptions(coll)) {
		return nil, errOnView(c.db, name)
	}
	was := len(coll.Indexes())
	target, _ := c.arg("index")
	var names []string
	switch t := target.(type) {
	case string:
		names = []string{t}
	case bson.A:
		for _, v := range t {
			s, ok := v.(string)
			if !ok {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "dropIndexes index names must be strings")
			}
			names = append(names, s)
		}
	case bson.D:
		for _, ix := range coll.Indexes() {
			if fmt.Sprint(ix.Key) == fmt.Sprint(t) {
				names = []string{ix.Name}
			}
		}
		if names == nil {
			return nil, mongoerr.New(mongoerr.IndexNotFound, "can't find index with key: %v", t)
		}
	default:
		return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'dropIndexes.index' is the wrong type")
	}
	for _, n := range names {
		if strings.TrimSpace(n) == "" {
			continue
		}
		if err := coll.DropIndex(n); err != nil {
			return nil, err
		}
	}
	return bson.D{{Key: "nIndexesWas", Value: int32(was)}}, nil
}

func cmdCollStats(c *cmdCtx) (bson.D, error) {
	name, err := c.collectionArg()
	if err != nil {
		return nil, err
	}
	coll := c.srv.store.Collection(c.db, name)
	if coll == nil {
		return nil, mongoerr.New(mongoerr.NamespaceNotFound, "ns not found %s.%s", c.db, name)
	}
	if isView(collOptions(coll)) {
		return nil, errOnView(c.db, name)
	}
	n, size := coll.Count(), coll.DataSize()
	avg := int64(0)
	if n > 0 {
		avg = size / n
	}
	return bson.D{
		{Key: "ns", Value: c.db + "." + name},
		{Key: "count", Value: n},
		{Key: "size", Value: size},
		{Key: "avgObjSize", Value: avg},
		{Key: "storageSize", Value: size},
		{Key: "nindexes", Value: int32(len(coll.Indexes()))},
	}, nil
}

func cmdDBStats(c *cmdCtx) (bson.D, error) {
	var objects, size int64
	colls := c.srv.store.ListCollections(c.db)
	indexes := 0
	for _, info := range colls {
		if coll := c.srv.store.Collection(c.db, info.Name); coll != nil {
			objects += coll.Count()
			size += coll.DataSize()
			indexes += len(coll.Indexes())
		}
	}
	return bson.D{
		{Key: "db", Value: c.db},
		{Key: "collections", Value: int32(len(colls))},
		{Key: "objects", Value: objects},
		{Key: "dataSize", Value: size},
		{Key: "storageSize", Value: size},
		{Key: "indexes", Value: int32(indexes)},
	}, nil
}
