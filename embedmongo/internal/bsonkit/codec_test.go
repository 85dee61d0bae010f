package bsonkit

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func sampleDocs() []bson.D {
	oid := bson.NewObjectID()
	dec, _ := bson.ParseDecimal128("1234.5678")
	return []bson.D{
		{},
		{{Key: "a", Value: 1.5}, {Key: "s", Value: "héllo"}, {Key: "i", Value: int32(-7)}, {Key: "l", Value: int64(1) << 40}},
		{{Key: "d", Value: bson.D{{Key: "x", Value: bson.A{int32(1), "two", bson.D{{Key: "y", Value: nil}}, bson.A{}}}}}, {Key: "empty", Value: bson.D{}}},
		{{Key: "bin", Value: bson.Binary{Subtype: 0, Data: []byte{1, 2, 3}}}, {Key: "old", Value: bson.Binary{Subtype: 2, Data: []byte{9}}},
			{Key: "uuid", Value: bson.Binary{Subtype: 4, Data: make([]byte, 16)}}},
		{{Key: "u", Value: bson.Undefined{}}, {Key: "oid", Value: oid}, {Key: "t", Value: true}, {Key: "f", Value: false},
			{Key: "dt", Value: bson.DateTime(-5)}, {Key: "re", Value: bson.Regex{Pattern: "^a.*", Options: "ix"}}},
		{{Key: "ptr", Value: bson.DBPointer{DB: "db.c", Pointer: oid}}, {Key: "js", Value: bson.JavaScript("f()")},
			{Key: "sym", Value: bson.Symbol("s")}, {Key: "ts", Value: bson.Timestamp{T: 7, I: 3}}, {Key: "dec", Value: dec},
			{Key: "min", Value: bson.MinKey{}}, {Key: "max", Value: bson.MaxKey{}}},
		{{Key: "cws", Value: bson.CodeWithScope{Code: "x", Scope: bson.D{{Key: "k", Value: int32(1)}}}}},
	}
}

// The codec must agree with the driver byte for byte and value for value.
func TestCodecMatchesDriver(t *testing.T) {
	for i, d := range sampleDocs() {
		want, err := bson.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Encode(d)
		if err != nil {
			t.Fatalf("doc %d: encode: %v", i, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("doc %d: encoding differs:\n got %x\nwant %x", i, got, want)
		}
		var wantD bson.D
		if err := bson.Unmarshal(want, &wantD); err != nil {
			t.Fatal(err)
		}
		gotD, err := Decode(want)
		if err != nil {
			t.Fatalf("doc %d: decode: %v", i, err)
		}
		if !reflect.DeepEqual(normalize(gotD), normalize(wantD)) {
			t.Errorf("doc %d: decoding differs:\n got %#v\nwant %#v", i, gotD, wantD)
		}
	}
}

// normalize maps nil and empty containers together: the driver and the codec may differ only there.
func normalize(v any) any {
	switch x := v.(type) {
	case bson.D:
		out := bson.D{}
		for _, e := range x {
			out = append(out, bson.E{Key: e.Key, Value: normalize(e.Value)})
		}
		return out
	case bson.A:
		out := bson.A{}
		for _, e := range x {
			out = append(out, normalize(e))
		}
		return out
	case bson.CodeWithScope:
		return bson.CodeWithScope{Code: x.Code, Scope: normalize(ToD(x.Scope))}
	}
	return v
}

// Corrupt input is an error, never a panic.
func TestDecodeCorrupt(t *testing.T) {
	good, _ := bson.Marshal(sampleDocs()[2])
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 5000; i++ {
		b := append([]byte(nil), good...)
		switch i % 3 {
		case 0:
			b = b[:r.IntN(len(b))]
		case 1:
			b[r.IntN(len(b))] ^= byte(1 + r.IntN(255))
		case 2:
			b[r.IntN(len(b))] = 0xff
		}
		_, _ = Decode(b)
	}
}

func BenchmarkDecode(b *testing.B) {
	raw, _ := bson.Marshal(sampleDocs()[2])
	b.Run("bsonkit", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := Decode(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("driver", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			var d bson.D
			if err := bson.Unmarshal(raw, &d); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func TestDecodeFieldsMatchesFullDecode(t *testing.T) {
	for i, d := range sampleDocs() {
		raw, _ := bson.Marshal(d)
		full, _ := Decode(raw)
		for _, e := range full {
			got, err := DecodeFields(raw, func(k string) bool { return k == e.Key })
			if err != nil {
				t.Fatalf("doc %d field %s: %v", i, e.Key, err)
			}
			if len(got) != 1 || !reflect.DeepEqual(normalize(got[0].Value), normalize(e.Value)) {
				t.Errorf("doc %d field %s: got %#v, want %#v", i, e.Key, got, e.Value)
			}
		}
	}
}

// BenchmarkDecodeAccount decodes the document the engine reads most in bankd: an account
// with its lease fields and pending transfer markers.
func BenchmarkDecodeAccount(b *testing.B) {
	raw, _ := bson.Marshal(bson.D{
		{Key: "_id", Value: "0b6b8f6e-5c1e-4f0a-9d3e-2a7c9b1d4e5f"},
		{Key: "owner", Value: "owner-123"},
		{Key: "currency", Value: "USD"},
		{Key: "balance", Value: int64(1_000_000)},
		{Key: "status", Value: "active"},
		{Key: "lockOwner", Value: "instance-1"},
		{Key: "fencingToken", Value: int64(42)},
		{Key: "lockTimestamp", Value: bson.DateTime(1_700_000_000_000)},
		{Key: "lockDuration", Value: int64(30_000)},
		{Key: "pendingTransfers", Value: bson.A{"3f1c2a9e-1b2c-4d5e-8f90-123456789abc", "7a8b9c0d-1e2f-4a5b-8c9d-0e1f2a3b4c5d"}},
		{Key: "createdAt", Value: bson.DateTime(1_700_000_000_000)},
	})
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Decode(raw); err != nil {
			b.Fatal(err)
		}
	}
}

// Encode sizes its buffer exactly for the values it encodes itself.
func TestEncodeSizesExactly(t *testing.T) {
	for i, d := range sampleDocs() {
		raw, err := Encode(d)
		if err != nil {
			t.Fatal(err)
		}
		if docSize(d) < len(raw) && cap(raw) != len(raw) {
			continue // a value the driver encodes: the size was a floor
		}
		if cap(raw) != len(raw) {
			t.Errorf("sample %d: %d bytes in a buffer of %d", i, len(raw), cap(raw))
		}
	}
	long := bson.A{}
	for i := range 150 {
		long = append(long, int32(i))
	}
	raw, _ := Encode(bson.D{{Key: "a", Value: long}, {Key: "re", Value: bson.Regex{Pattern: "x", Options: "im"}}})
	if cap(raw) != len(raw) {
		t.Errorf("150-element array: %d bytes in a buffer of %d", len(raw), cap(raw))
	}
}
