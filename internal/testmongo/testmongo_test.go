package testmongo

import (
	"context"
	"regexp"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func TestMain(m *testing.M) { Main(m) }

func TestDatabaseNames(t *testing.T) {
	valid := regexp.MustCompile(`^[A-Za-z0-9_]{1,63}$`)
	seen := map[string]bool{}
	for range 20 {
		n := DatabaseName(t)
		if !valid.MatchString(n) || seen[n] {
			t.Fatalf("name %q: valid %v, seen before %v", n, valid.MatchString(n), seen[n])
		}
		seen[n] = true
	}
}

// TestTwoClientsShareADatabase: what one instance writes, the other reads.
func TestTwoClientsShareADatabase(t *testing.T) {
	db := Database(t)
	other := NewClient(t).Database(db.Name())
	ctx := context.Background()
	if _, err := db.Collection("c").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	n, err := other.Collection("c").CountDocuments(ctx, bson.D{})
	if err != nil || n != 1 {
		t.Fatalf("other client counts %d, %v; want 1", n, err)
	}
	if Target(t) == "" || URI(t) == "" {
		t.Error("target and URI must be known")
	}
}
