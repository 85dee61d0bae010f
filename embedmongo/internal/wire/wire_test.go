package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func mustDoc(t testing.TB, d bson.D) []byte {
	t.Helper()
	b, err := bson.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// msgWithSequence builds an OP_MSG with a body and one kind-1 section.
func msgWithSequence(t testing.TB, checksum bool) []byte {
	body := mustDoc(t, bson.D{{Key: "insert", Value: "c"}, {Key: "$db", Value: "test"}})
	d1 := mustDoc(t, bson.D{{Key: "_id", Value: 1}})
	d2 := mustDoc(t, bson.D{{Key: "_id", Value: 2}})
	var sec []byte
	sec = append(sec, "documents\x00"...)
	sec = append(sec, d1...)
	sec = append(sec, d2...)
	var payload []byte
	flags := uint32(0)
	if checksum {
		flags |= FlagChecksumPresent
	}
	payload = binary.LittleEndian.AppendUint32(payload, flags)
	payload = append(payload, 0)
	payload = append(payload, body...)
	payload = append(payload, 1)
	payload = binary.LittleEndian.AppendUint32(payload, uint32(4+len(sec)))
	payload = append(payload, sec...)
	length := HeaderLen + len(payload)
	if checksum {
		length += 4
	}
	msg := appendHeader(nil, int32(length), 7, 0, OpMsg)
	msg = append(msg, payload...)
	if checksum {
		msg = AppendChecksum(msg)
	}
	return msg
}

func TestReadMessageOpMsg(t *testing.T) {
	for _, checksum := range []bool{false, true} {
		m, err := ReadMessage(bytes.NewReader(msgWithSequence(t, checksum)), 48_000_000)
		if err != nil {
			t.Fatalf("checksum=%v: %v", checksum, err)
		}
		if got := m.Body.Lookup("insert").StringValue(); got != "c" {
			t.Errorf("body insert = %q, want c", got)
		}
		if len(m.Sequences) != 1 || m.Sequences[0].Identifier != "documents" || len(m.Sequences[0].Docs) != 2 {
			t.Errorf("sequences = %+v, want one 'documents' with 2 docs", m.Sequences)
		}
	}
}

func TestReadMessageOpQuery(t *testing.T) {
	q := mustDoc(t, bson.D{{Key: "isMaster", Value: 1}})
	m, err := ReadMessage(bytes.NewReader(AppendQuery(nil, 3, "admin.$cmd", q)), 48_000_000)
	if err != nil {
		t.Fatal(err)
	}
	if m.FullCollectionName != "admin.$cmd" || m.NumberToReturn != -1 {
		t.Errorf("got %q %d, want admin.$cmd -1", m.FullCollectionName, m.NumberToReturn)
	}
}

func TestReadMessageRejects(t *testing.T) {
	good := msgWithSequence(t, true)
	corrupt := append([]byte(nil), good...)
	corrupt[len(corrupt)-10] ^= 0xff // inside a document: checksum no longer matches
	tooBig := append([]byte(nil), good...)
	binary.LittleEndian.PutUint32(tooBig, 100_000_000)
	badKind := append([]byte(nil), msgWithSequence(t, false)...)
	badKind[HeaderLen+4] = 9
	compressed := appendHeader(nil, HeaderLen+9, 1, 0, OpCompressed)
	compressed = append(compressed, make([]byte, 9)...)
	tests := []struct {
		name string
		msg  []byte
	}{
		{"checksum mismatch", corrupt},
		{"oversized", tooBig},
		{"truncated body", good[:len(good)-3]},
		{"truncated header", good[:10]},
		{"unknown section kind", badKind},
		{"compressed", compressed},
		{"length below header", appendHeader(nil, 4, 1, 0, OpMsg)},
	}
	for _, tt := range tests {
		_, err := ReadMessage(bytes.NewReader(tt.msg), 48_000_000)
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: err = %v, want ErrMalformed", tt.name, err)
		}
	}
	if _, err := ReadMessage(bytes.NewReader(nil), 48_000_000); err != io.EOF {
		t.Errorf("empty stream: err = %v, want io.EOF", err)
	}
}

func TestAppendMsgRoundTrip(t *testing.T) {
	doc := mustDoc(t, bson.D{{Key: "ok", Value: 1.0}})
	m, err := ReadMessage(bytes.NewReader(AppendMsg(nil, 9, 7, 0, doc)), 48_000_000)
	if err != nil {
		t.Fatal(err)
	}
	if m.Header.ResponseTo != 7 || !bytes.Equal(m.Body, doc) {
		t.Errorf("round trip: got responseTo %d body %v", m.Header.ResponseTo, m.Body)
	}
}

// FuzzReadMessage feeds arbitrary bytes to the decoder: it must return a message or an error,
// never panic, and a decoded message's documents must be valid BSON.
func FuzzReadMessage(f *testing.F) {
	f.Add(msgWithSequence(f, false))
	f.Add(msgWithSequence(f, true))
	f.Add(AppendQuery(nil, 1, "admin.$cmd", mustDoc(f, bson.D{{Key: "hello", Value: 1}})))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ReadMessage(bytes.NewReader(data), 1<<20)
		if err != nil {
			return
		}
		for _, doc := range append([]bson.Raw{m.Body, m.Query}, seqDocs(m)...) {
			if doc != nil {
				if err := doc.Validate(); err != nil {
					t.Fatalf("decoded an invalid document: %v", err)
				}
				_, _ = doc.Elements()
			}
		}
	})
}

func seqDocs(m *Message) []bson.Raw {
	var out []bson.Raw
	for _, s := range m.Sequences {
		out = append(out, s.Docs...)
	}
	return out
}
