package embedmongo

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
	"github.com/bankd/bankd/embedmongo/internal/storage"
)

// cmdInsert: {insert: coll, documents: [...], ordered}. Documents are stored in one collection
// write, so a batch shares one fsync; an ordered insert stops at its first error.
func cmdInsert(c *cmdCtx) (bson.D, error) {
	name, err := c.collectionArg()
	if err != nil {
		return nil, err
	}
	docs, present, err := c.arrayArg("documents")
	if err != nil {
		return nil, err
	}
	if !present {
		return nil, mongoerr.New(40414, "BSON field 'insert.documents' is missing but a required field")
	}
	if len(docs) > MaxWriteBatchSize {
		return nil, mongoerr.New(mongoerr.InvalidLength, "Write batch sizes must be between 1 and %d. Got %d operations.", MaxWriteBatchSize, len(docs))
	}
	ordered, err := c.boolArg("ordered", true)
	if err != nil {
		return nil, err
	}
	coll, err := c.srv.store.CollectionOrCreate(c.db, name)
	if err != nil {
		return nil, err
	}
	opts := collOptions(coll)
	if isView(opts) {
		return nil, errOnView(c.db, name)
	}
	val, err := c.validatorFor(opts, nil)
	if err != nil {
		return nil, err
	}
	var n int
	var errs []writeError
	err = coll.Write(func(tx *storage.Tx) error {
		for i, v := range docs {
			doc, ok := v.(bson.D)
			if !ok {
				return mongoerr.New(mongoerr.TypeMismatch, "BSON field 'insert.documents.%d' is the wrong type, expected type 'object'", i)
			}
			doc, raw, err := prepareInsert(doc)
			if err == nil {
				err = val.check(nil, doc)
			}
			if err == nil {
				_, err = tx.InsertEncoded(raw)
			}
			if err != nil {
				errs = append(errs, writeError{index: i, err: mongoerr.As(err)})
				if ordered {
					break
				}
				continue
			}
			n++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	r := bson.D{{Key: "n", Value: int32(n)}}
	if len(errs) > 0 {
		r = append(r, bson.E{Key: "writeErrors", Value: writeErrorsArray(errs)})
	}
	return r, nil
}
