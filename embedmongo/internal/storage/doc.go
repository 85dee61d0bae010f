// Package storage holds the engine's databases, collections, documents and indexes, in memory
// and, with a data directory, durably on disk.
package storage
