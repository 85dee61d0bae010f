// Package bsonkit is the engine's value model: documents are bson.D, arrays bson.A, and scalars
// the driver's own Go types (float64, string, int32, int64, bool, nil, bson.ObjectID,
// bson.DateTime, bson.Timestamp, bson.Decimal128, bson.Binary, bson.Regex, bson.MinKey, ...),
// exactly what bson.Unmarshal produces when decoding into a bson.D.
//
// It provides what every layer of the engine shares: MongoDB's cross-type comparison order,
// type names and codes for $type, numeric arithmetic with MongoDB's type promotion, dotted-path
// helpers on plain documents, and a Missing sentinel for "no such field" (distinct from null).
package bsonkit
