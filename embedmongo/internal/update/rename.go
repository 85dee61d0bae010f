package update

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// renameOp is one $rename: as in mongod it occupies both paths of the tree (so other updates
// conflict with either), sets the destination where the tree reaches it and removes the
// source. Neither path may run through an array.
type renameOp struct {
	from, to         []string
	fromPath, toPath string
}

// prepareRenames looks up every rename source in the original document and validates both
// paths before anything is applied.
func (c *applyCtx) prepareRenames() error {
	for _, r := range c.u.renames {
		v, err := c.renameSource(r)
		if err != nil {
			return err
		}
		if bsonkit.IsMissing(v) {
			continue
		}
		if err := c.checkRenameDest(r); err != nil {
			return err
		}
		if c.renamed == nil {
			c.renamed = map[*renameOp]any{}
		}
		c.renamed[r] = v
	}
	return nil
}

func (c *applyCtx) renameSource(r *renameOp) (any, error) {
	var cur any = c.doc
	for i, part := range r.from {
		switch x := cur.(type) {
		case bson.D:
			v, ok := bsonkit.Get(x, part)
			if !ok {
				return bsonkit.Missing, nil
			}
			cur = v
			continue
		case bson.A:
			if idx, ok := parseIndex(part); ok {
				if idx >= len(x) {
					return bsonkit.Missing, nil
				}
				return nil, mongoerr.New(mongoerr.BadValue,
					"The source field cannot be an array element, '%s' in doc with %s has an array field called '%s'",
					r.fromPath, idString(c.doc), r.from[i-1])
			}
		}
		return nil, mongoerr.New(mongoerr.PathNotViable,
			"cannot use the part (%s of %s) to traverse the element ({%s})",
			part, r.fromPath, formatElem(r.from[i-1], cur))
	}
	return cur, nil
}

func (c *applyCtx) checkRenameDest(r *renameOp) error {
	var cur any = c.doc
	for i, part := range r.to {
		switch x := cur.(type) {
		case bson.D:
			v, ok := bsonkit.Get(x, part)
			if !ok {
				return nil
			}
			cur = v
		case bson.A:
			return mongoerr.New(mongoerr.BadValue,
				"The destination field cannot be an array element, '%s' in doc with %s has an array field called '%s'",
				r.toPath, idString(c.doc), r.to[i-1])
		default:
			return nil // creating below a scalar fails with PathNotViable when applied
		}
	}
	return nil
}

// renameSource removes the source field when the rename takes place.
type renameSource struct{ r *renameOp }

func (o *renameSource) apply(c *applyCtx, _ string, cur any) (any, bool, error) {
	if _, ok := c.renamed[o.r]; !ok || bsonkit.IsMissing(cur) {
		return cur, false, nil
	}
	return bsonkit.Missing, true, nil
}

// renameDest sets the destination to the source's original value.
type renameDest struct{ r *renameOp }

func (o *renameDest) apply(c *applyCtx, _ string, cur any) (any, bool, error) {
	v, ok := c.renamed[o.r]
	if !ok || identical(cur, v) {
		return cur, false, nil
	}
	return v, true, nil
}
