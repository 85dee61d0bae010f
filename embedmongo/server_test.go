package embedmongo

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/bankd/bankd/embedmongo/internal/wire"
)

func TestCRUDOverDriver(t *testing.T) {
	_, client := startEngine(t, Options{})
	ctx := testCtx(t)
	coll := client.Database("crud").Collection("people")
	if _, err := coll.InsertMany(ctx, []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "name", Value: "ann"}, {Key: "age", Value: 31}},
		bson.D{{Key: "_id", Value: 2}, {Key: "name", Value: "bob"}, {Key: "age", Value: 25}},
	}); err != nil {
		t.Fatal(err)
	}
	var got struct{ Name string }
	if err := coll.FindOne(ctx, bson.D{{Key: "age", Value: bson.D{{Key: "$gt", Value: 30}}}}).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.Name != "ann" {
		t.Errorf("FindOne age>30: got %q, want ann", got.Name)
	}
	res, err := coll.UpdateMany(ctx, bson.D{}, bson.D{{Key: "$inc", Value: bson.D{{Key: "age", Value: 1}}}})
	if err != nil || res.MatchedCount != 2 || res.ModifiedCount != 2 {
		t.Fatalf("UpdateMany: %+v, %v; want 2 matched, 2 modified", res, err)
	}
	_, err = coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}})
	var we mongo.WriteException
	if !errors.As(err, &we) || len(we.WriteErrors) != 1 || we.WriteErrors[0].Code != 11000 {
		t.Fatalf("duplicate _id: got %v, want write error 11000", err)
	}
	del, err := coll.DeleteOne(ctx, bson.D{{Key: "name", Value: "bob"}})
	if err != nil || del.DeletedCount != 1 {
		t.Fatalf("DeleteOne: %+v %v", del, err)
	}
	n, err := coll.CountDocuments(ctx, bson.D{})
	if err != nil || n != 1 {
		t.Fatalf("CountDocuments = %d, %v; want 1", n, err)
	}
}

func TestUnknownCommand(t *testing.T) {
	_, client := startEngine(t, Options{})
	err := client.Database("x").RunCommand(testCtx(t), bson.D{{Key: "noSuchThing", Value: 1}}).Err()
	var ce mongo.CommandError
	if !errors.As(err, &ce) || ce.Code != 59 || ce.Name != "CommandNotFound" {
		t.Fatalf("got %v, want CommandNotFound (59)", err)
	}
}

// Malformed, truncated and oversized messages close that connection only; the server keeps
// serving everyone else and stores nothing from them.
func TestMalformedMessagesCloseOnlyThatConnection(t *testing.T) {
	srv, client := startEngine(t, Options{})
	ctx := testCtx(t)
	insert, _ := bson.Marshal(bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 1}}}}, {Key: "$db", Value: "mal"}})
	good := wire.AppendMsg(nil, 1, 0, 0, insert)
	oversized := append([]byte(nil), good...)
	binary.LittleEndian.PutUint32(oversized, MaxMessageSizeBytes+1)
	badBSON := append([]byte(nil), good...)
	badBSON[len(badBSON)-1] = 7 // document no longer ends with NUL
	cases := map[string][]byte{
		"garbage":         []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
		"truncated":       good[:len(good)-5],
		"oversized":       oversized,
		"invalid bson":    badBSON,
		"unknown opcode":  append(binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, 20), 1), 0), 9999), 0, 0, 0, 0),
		"header too tiny": binary.LittleEndian.AppendUint32(nil, 3),
	}
	for name, msg := range cases {
		nc, err := net.Dial("tcp", srv.Addr())
		if err != nil {
			t.Fatal(err)
		}
		_, _ = nc.Write(msg)
		if tc, ok := nc.(*net.TCPConn); ok && (name == "truncated" || name == "header too tiny") {
			_ = tc.CloseWrite()
		}
		_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		var buf [1]byte
		if _, err := nc.Read(buf[:]); err == nil {
			t.Errorf("%s: server answered instead of closing the connection", name)
		} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Errorf("%s: connection left open", name)
		}
		nc.Close()
	}
	n, err := client.Database("mal").Collection("c").CountDocuments(ctx, bson.D{})
	if err != nil || n != 0 {
		t.Fatalf("after malformed messages: count = %d, err = %v; want 0, nil", n, err)
	}
}

// The legacy OP_QUERY handshake is answered with OP_REPLY.
func TestLegacyHandshake(t *testing.T) {
	srv, _ := startEngine(t, Options{})
	q, _ := bson.Marshal(bson.D{{Key: "isMaster", Value: 1}, {Key: "helloOk", Value: true}})
	nc, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := nc.Write(wire.AppendQuery(nil, 42, "admin.$cmd", q)); err != nil {
		t.Fatal(err)
	}
	_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	var hdr [16]byte
	if _, err := readFull(nc, hdr[:]); err != nil {
		t.Fatal(err)
	}
	length := int(binary.LittleEndian.Uint32(hdr[:]))
	if op := int32(binary.LittleEndian.Uint32(hdr[12:])); op != wire.OpReply {
		t.Fatalf("opcode = %d, want OP_REPLY", op)
	}
	if to := int32(binary.LittleEndian.Uint32(hdr[8:])); to != 42 {
		t.Fatalf("responseTo = %d, want 42", to)
	}
	body := make([]byte, length-16)
	if _, err := readFull(nc, body); err != nil {
		t.Fatal(err)
	}
	doc := bson.Raw(body[20:])
	if v, err := doc.LookupErr("ismaster"); err != nil || !v.Boolean() {
		t.Errorf("ismaster = %v (%v), want true", v, err)
	}
	if v := doc.Lookup("maxWireVersion").Int32(); v != MaxWireVersion {
		t.Errorf("maxWireVersion = %d, want %d", v, MaxWireVersion)
	}
	if !bytes.Contains(body, []byte("helloOk")) {
		t.Error("helloOk not echoed")
	}
}

func readFull(nc net.Conn, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := nc.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
