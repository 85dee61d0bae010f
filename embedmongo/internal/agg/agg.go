// Package agg runs aggregation pipelines.
//
// A pipeline is first compiled stage by stage (so that parse errors are reported before any
// document is processed, as mongod does), then run over a materialized slice of documents.
// Stages never modify their input documents in place: every change builds new documents, so
// snapshots handed in by the storage layer may be shared freely.
package agg

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/collation"
	"github.com/bankd/bankd/embedmongo/internal/expr"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// Env is the engine's side of stages that touch other collections ($lookup, $unionWith,
// $out, $merge).
type Env interface {
	// Docs returns a snapshot of the documents of db.coll in natural order (empty if absent).
	Docs(db, coll string) ([]bson.D, error)
	// ReplaceCollection atomically replaces db.coll's documents (creating it), for $out.
	// Indexes of an existing collection are kept and enforced, as in mongod.
	ReplaceCollection(db, coll string, docs []bson.D) error
	// FindOne returns the first document of db.coll matching filter, or nil.
	FindOne(db, coll string, filter bson.D) (bson.D, error)
	// Insert inserts doc into db.coll (creating it); a duplicate _id gives error 11000.
	Insert(db, coll string, doc bson.D) error
	// Replace replaces the document of db.coll whose _id equals id.
	Replace(db, coll string, id any, doc bson.D) error
}

// Options is what a pipeline runs with.
type Options struct {
	DB   string // database of the aggregate command (default for $lookup/$out/$merge)
	Vars expr.Vars
	Env  Env
	// Collation orders and compares strings in $match, $sort, $group and $lookup
	// (nil = simple, binary).
	Collation *collation.Collation
}

// Run executes pipeline over input and returns the output documents. A trailing $out or $merge
// writes through Env and yields no documents.
func Run(pipeline []bson.D, input []bson.D, opts Options) ([]bson.D, error) {
	r := &runner{opts: opts}
	stages, err := r.compile(pipeline, ctxTop)
	if err != nil {
		return nil, err
	}
	return runStages(stages, input)
}

// Validate parses pipeline as a top-level aggregate pipeline without running it, reporting the
// errors Run would report before processing any document.
func Validate(pipeline []bson.D) error {
	r := &runner{}
	_, err := r.compile(pipeline, ctxTop)
	return err
}

// IsWriteStage reports whether a pipeline ends with $out or $merge (such an aggregate needs a
// writable target and returns an empty cursor).
func IsWriteStage(pipeline []bson.D) bool {
	if len(pipeline) == 0 || len(pipeline[len(pipeline)-1]) != 1 {
		return false
	}
	name := pipeline[len(pipeline)-1][0].Key
	return name == "$out" || name == "$merge"
}

// StartsWithDocuments reports whether the pipeline's first stage is $documents (a
// collectionless, database-level aggregate).
func StartsWithDocuments(pipeline []bson.D) bool {
	return len(pipeline) > 0 && len(pipeline[0]) == 1 && pipeline[0][0].Key == "$documents"
}

// stage is a compiled stage: it maps the whole input to the whole output.
type stage func(in []bson.D) ([]bson.D, error)

func runStages(stages []stage, docs []bson.D) ([]bson.D, error) {
	var err error
	for _, s := range stages {
		if docs, err = s(docs); err != nil {
			return nil, err
		}
	}
	if docs == nil {
		docs = []bson.D{}
	}
	return docs, nil
}

// pipeCtx says where a pipeline is nested, which restricts the stages it may use.
type pipeCtx int

const (
	ctxTop    pipeCtx = iota
	ctxLookup         // $lookup sub-pipeline
	ctxUnion          // $unionWith sub-pipeline
	ctxFacet          // $facet sub-pipeline
	ctxUpdate         // pipeline-style update
)

// runner holds what a pipeline run shares across stages and nested pipelines.
type runner struct {
	opts Options
	// docs caches collection snapshots so a $lookup reads each foreign collection once.
	docs map[string][]bson.D
}

// withVars returns a runner sharing r's environment and cache but evaluating with vars.
func (r *runner) withVars(vars expr.Vars) *runner {
	o := r.opts
	o.Vars = vars
	if r.docs == nil {
		r.docs = map[string][]bson.D{}
	}
	return &runner{opts: o, docs: r.docs}
}

func (r *runner) collection(db, coll string) ([]bson.D, error) {
	if r.opts.Env == nil {
		return nil, mongoerr.New(mongoerr.InternalError, "aggregation stage needs a storage environment")
	}
	if r.docs == nil {
		r.docs = map[string][]bson.D{}
	}
	ns := db + "." + coll
	if d, ok := r.docs[ns]; ok {
		return d, nil
	}
	d, err := r.opts.Env.Docs(db, coll)
	if err != nil {
		return nil, err
	}
	r.docs[ns] = d
	return d, nil
}

// stageParsers maps stage names to their parsers.
var stageParsers map[string]func(r *runner, spec any, c pipeCtx) (stage, error)

func init() {
	stageParsers = map[string]func(r *runner, spec any, c pipeCtx) (stage, error){
		"$match":             parseMatch,
		"$project":           parseProject,
		"$addFields":         parseAddFields("$addFields"),
		"$set":               parseAddFields("$set"),
		"$unset":             parseUnset,
		"$replaceRoot":       parseReplaceRoot,
		"$replaceWith":       parseReplaceWith,
		"$sort":              parseSort,
		"$skip":              parseSkip,
		"$limit":             parseLimit,
		"$count":             parseCount,
		"$group":             parseGroup,
		"$sortByCount":       parseSortByCount,
		"$unwind":            parseUnwind,
		"$sample":            parseSample,
		"$bucket":            parseBucket,
		"$lookup":            parseLookup,
		"$unionWith":         parseUnionWith,
		"$facet":             parseFacet,
		"$documents":         parseDocuments,
		"$listLocalSessions": parseListLocalSessions,
		"$out":               parseOut,
		"$merge":             parseMerge,
	}
}

// knownUnsupported are real mongod stages this engine does not implement: they fail with
// NotImplemented rather than mongod's "unrecognized stage".
var knownUnsupported = map[string]bool{
	"$bucketAuto": true, "$changeStream": true, "$collStats": true, "$currentOp": true,
	"$densify": true, "$fill": true, "$geoNear": true, "$graphLookup": true, "$indexStats": true,
	"$listSessions": true, "$planCacheStats": true, "$redact": true, "$search": true,
	"$searchMeta": true, "$setWindowFields": true, "$shardedDataDistribution": true,
	"$listSearchIndexes": true, "$changeStreamSplitLargeEvent": true,
}

// updateStages are the stages a pipeline-style update may use.
var updateStages = map[string]bool{
	"$addFields": true, "$set": true, "$project": true, "$unset": true,
	"$replaceRoot": true, "$replaceWith": true,
}

func (r *runner) compile(pipeline []bson.D, c pipeCtx) ([]stage, error) {
	stages := make([]stage, 0, len(pipeline))
	for i, spec := range pipeline {
		if len(spec) != 1 {
			return nil, mongoerr.New(40323, "A pipeline stage specification object must contain exactly one field.")
		}
		name := spec[0].Key
		parse, ok := stageParsers[name]
		if !ok {
			if knownUnsupported[name] {
				return nil, mongoerr.New(mongoerr.NotImplemented, "%s is not supported by embedmongo", name)
			}
			return nil, mongoerr.New(40324, "Unrecognized pipeline stage name: '%s'", name)
		}
		if err := checkPlacement(name, i, len(pipeline), c); err != nil {
			return nil, err
		}
		s, err := parse(r, spec[0].Value, c)
		if err != nil {
			return nil, err
		}
		stages = append(stages, s)
	}
	return stages, nil
}

// checkPlacement enforces where position-sensitive stages may appear.
func checkPlacement(name string, i, n int, c pipeCtx) error {
	if c == ctxUpdate && !updateStages[name] {
		return mongoerr.New(mongoerr.InvalidOptions, "%s is not allowed to be used within an update", name)
	}
	switch name {
	case "$out", "$merge":
		switch c {
		case ctxFacet:
			return mongoerr.New(40600, "%s is not allowed to be used within a $facet stage", name)
		case ctxLookup:
			return mongoerr.New(51047, "%s is not allowed within a $lookup's sub-pipeline", name)
		case ctxUnion:
			return mongoerr.New(31441, "%s is not allowed within a $unionWith's sub-pipeline", name)
		}
		if i != n-1 {
			return mongoerr.New(40601, "%s can only be the final stage in the pipeline", name)
		}
	case "$documents", "$listLocalSessions":
		if i != 0 {
			return mongoerr.New(40602, "%s is only valid as the first stage in a pipeline", name)
		}
	case "$facet":
		if c == ctxFacet {
			return mongoerr.New(40600, "$facet is not allowed to be used within a $facet stage")
		}
	}
	return nil
}

// ValidateUpdatePipeline parses a pipeline-style update without applying it, so an update
// can be rejected before any document is touched.
func ValidateUpdatePipeline(pipeline []bson.D) error {
	r := &runner{}
	_, err := r.compile(pipeline, ctxUpdate)
	return err
}

// ApplyUpdatePipeline runs a pipeline-style update (update: [ ... ]) over one document. Only
// $addFields/$set, $project, $unset and $replaceRoot/$replaceWith are allowed, as in mongod.
func ApplyUpdatePipeline(pipeline []bson.D, doc bson.D, vars expr.Vars) (bson.D, error) {
	r := &runner{opts: Options{Vars: vars}}
	stages, err := r.compile(pipeline, ctxUpdate)
	if err != nil {
		return nil, err
	}
	out, err := runStages(stages, []bson.D{doc})
	if err != nil {
		return nil, err
	}
	if len(out) != 1 {
		return nil, mongoerr.New(mongoerr.InternalError, "update pipeline produced %d documents", len(out))
	}
	return out[0], nil
}
