// Package wire reads and writes MongoDB wire-protocol messages: the 16-byte header, OP_MSG (with
// section kinds 0 and 1 and the optional CRC-32C checksum), the legacy OP_QUERY handshake and the
// OP_REPLY that answers it. Every length is checked before it is trusted, so a malformed,
// truncated or oversized message is an error, never a panic or an unbounded allocation.
package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Opcodes.
const (
	OpReply      int32 = 1
	OpQuery      int32 = 2004
	OpCompressed int32 = 2012
	OpMsg        int32 = 2013
)

// OP_MSG flag bits.
const (
	FlagChecksumPresent uint32 = 1 << 0
	FlagMoreToCome      uint32 = 1 << 1
	FlagExhaustAllowed  uint32 = 1 << 16
	knownFlags                 = FlagChecksumPresent | FlagMoreToCome | FlagExhaustAllowed
)

// HeaderLen is the size of the standard message header.
const HeaderLen = 16

// ErrMalformed wraps every decoding failure, so callers can tell a bad peer from an I/O error.
var ErrMalformed = errors.New("malformed message")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Header is the standard message header.
type Header struct {
	Length     int32
	RequestID  int32
	ResponseTo int32
	OpCode     int32
}

// Sequence is an OP_MSG kind-1 section: a named run of documents that the command receives as
// an array field (e.g. "documents" for insert).
type Sequence struct {
	Identifier string
	Docs       []bson.Raw
}

// Message is a decoded request.
type Message struct {
	Header Header

	// OP_MSG
	Flags     uint32
	Body      bson.Raw
	Sequences []Sequence

	// OP_QUERY
	FullCollectionName string
	NumberToSkip       int32
	NumberToReturn     int32
	Query              bson.Raw
}

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

// ReadMessage reads one message. maxSize bounds the whole message (mongod: 48,000,000 bytes).
// io.EOF is returned untouched when the peer closes between messages.
func ReadMessage(r io.Reader, maxSize int32) (*Message, error) {
	var hdr [HeaderLen]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, malformed("truncated header")
		}
		return nil, err
	}
	h := Header{
		Length:     int32(binary.LittleEndian.Uint32(hdr[0:])),
		RequestID:  int32(binary.LittleEndian.Uint32(hdr[4:])),
		ResponseTo: int32(binary.LittleEndian.Uint32(hdr[8:])),
		OpCode:     int32(binary.LittleEndian.Uint32(hdr[12:])),
	}
	if h.Length < HeaderLen || h.Length > maxSize {
		return nil, malformed("message length %d out of range [%d, %d]", h.Length, HeaderLen, maxSize)
	}
	body := make([]byte, h.Length-HeaderLen)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, malformed("truncated message body: %v", err)
	}
	return Parse(h, body)
}

// Parse decodes a message body (everything after the header).
func Parse(h Header, body []byte) (*Message, error) {
	m := &Message{Header: h}
	switch h.OpCode {
	case OpMsg:
		return m, m.parseMsg(h, body)
	case OpQuery:
		return m, m.parseQuery(body)
	case OpCompressed:
		return nil, malformed("compression was not negotiated")
	default:
		return nil, malformed("unsupported opcode %d", h.OpCode)
	}
}

func (m *Message) parseMsg(h Header, body []byte) error {
	if len(body) < 5 {
		return malformed("OP_MSG too short")
	}
	m.Flags = binary.LittleEndian.Uint32(body)
	if m.Flags&0xffff&^knownFlags != 0 {
		// The low 16 bits are "required" flags: an unknown one must be rejected.
		return malformed("unknown required OP_MSG flag bits %#x", m.Flags&0xffff&^knownFlags)
	}
	rest := body[4:]
	if m.Flags&FlagChecksumPresent != 0 {
		if len(rest) < 4 {
			return malformed("OP_MSG checksum missing")
		}
		want := binary.LittleEndian.Uint32(rest[len(rest)-4:])
		var hdr [HeaderLen]byte
		binary.LittleEndian.PutUint32(hdr[0:], uint32(h.Length))
		binary.LittleEndian.PutUint32(hdr[4:], uint32(h.RequestID))
		binary.LittleEndian.PutUint32(hdr[8:], uint32(h.ResponseTo))
		binary.LittleEndian.PutUint32(hdr[12:], uint32(h.OpCode))
		sum := crc32.Update(crc32.Checksum(hdr[:], castagnoli), castagnoli, body[:len(body)-4])
		if sum != want {
			return malformed("OP_MSG checksum mismatch")
		}
		rest = rest[:len(rest)-4]
	}
	for len(rest) > 0 {
		kind := rest[0]
		rest = rest[1:]
		switch kind {
		case 0:
			if m.Body != nil {
				return malformed("OP_MSG has more than one body section")
			}
			doc, n, err := readDoc(rest)
			if err != nil {
				return err
			}
			m.Body, rest = doc, rest[n:]
		case 1:
			if len(rest) < 4 {
				return malformed("truncated document sequence")
			}
			size := int(int32(binary.LittleEndian.Uint32(rest)))
			if size < 5 || size > len(rest) {
				return malformed("document sequence size %d out of range", size)
			}
			sec := rest[4:size]
			rest = rest[size:]
			id, n, err := readCString(sec)
			if err != nil {
				return err
			}
			seq := Sequence{Identifier: id}
			sec = sec[n:]
			for len(sec) > 0 {
				doc, n, err := readDoc(sec)
				if err != nil {
					return err
				}
				seq.Docs = append(seq.Docs, doc)
				sec = sec[n:]
			}
			m.Sequences = append(m.Sequences, seq)
		default:
			return malformed("unknown OP_MSG section kind %d", kind)
		}
	}
	if m.Body == nil {
		return malformed("OP_MSG has no body section")
	}
	return nil
}

func (m *Message) parseQuery(body []byte) error {
	if len(body) < 4 {
		return malformed("OP_QUERY too short")
	}
	rest := body[4:] // flags: nothing we act on
	name, n, err := readCString(rest)
	if err != nil {
		return err
	}
	m.FullCollectionName = name
	rest = rest[n:]
	if len(rest) < 8 {
		return malformed("OP_QUERY truncated")
	}
	m.NumberToSkip = int32(binary.LittleEndian.Uint32(rest))
	m.NumberToReturn = int32(binary.LittleEndian.Uint32(rest[4:]))
	rest = rest[8:]
	doc, n, err := readDoc(rest)
	if err != nil {
		return err
	}
	m.Query = doc
	rest = rest[n:]
	if len(rest) > 0 { // optional returnFieldsSelector
		if _, n, err = readDoc(rest); err != nil {
			return err
		}
		if n != len(rest) {
			return malformed("trailing bytes after OP_QUERY")
		}
	}
	return nil
}

// readDoc reads and validates one BSON document at the start of b.
func readDoc(b []byte) (bson.Raw, int, error) {
	if len(b) < 5 {
		return nil, 0, malformed("truncated document")
	}
	size := int(int32(binary.LittleEndian.Uint32(b)))
	if size < 5 || size > len(b) {
		return nil, 0, malformed("document size %d out of range", size)
	}
	doc := bson.Raw(b[:size])
	if err := doc.Validate(); err != nil {
		return nil, 0, malformed("invalid BSON: %v", err)
	}
	return doc, size, nil
}

func readCString(b []byte) (string, int, error) {
	for i, c := range b {
		if c == 0 {
			return string(b[:i]), i + 1, nil
		}
	}
	return "", 0, malformed("unterminated string")
}

// AppendMsg appends an OP_MSG reply carrying one body document.
func AppendMsg(dst []byte, requestID, responseTo int32, flags uint32, doc []byte) []byte {
	length := HeaderLen + 4 + 1 + len(doc)
	dst = appendHeader(dst, int32(length), requestID, responseTo, OpMsg)
	dst = binary.LittleEndian.AppendUint32(dst, flags)
	dst = append(dst, 0)
	return append(dst, doc...)
}

// AppendReply appends an OP_REPLY carrying one document (the answer to an OP_QUERY handshake).
func AppendReply(dst []byte, requestID, responseTo int32, doc []byte) []byte {
	length := HeaderLen + 20 + len(doc)
	dst = appendHeader(dst, int32(length), requestID, responseTo, OpReply)
	dst = binary.LittleEndian.AppendUint32(dst, 0) // responseFlags
	dst = binary.LittleEndian.AppendUint64(dst, 0) // cursorID
	dst = binary.LittleEndian.AppendUint32(dst, 0) // startingFrom
	dst = binary.LittleEndian.AppendUint32(dst, 1) // numberReturned
	return append(dst, doc...)
}

// AppendQuery appends an OP_QUERY (used by tests and fuzz seeds).
func AppendQuery(dst []byte, requestID int32, fullCollectionName string, query []byte) []byte {
	length := HeaderLen + 4 + len(fullCollectionName) + 1 + 8 + len(query)
	dst = appendHeader(dst, int32(length), requestID, 0, OpQuery)
	dst = binary.LittleEndian.AppendUint32(dst, 0)
	dst = append(dst, fullCollectionName...)
	dst = append(dst, 0)
	dst = binary.LittleEndian.AppendUint32(dst, 0)
	dst = binary.LittleEndian.AppendUint32(dst, 0xffffffff) // numberToReturn -1
	return append(dst, query...)
}

// AppendChecksum appends the CRC-32C of msg (whose header length must already count the 4 bytes).
func AppendChecksum(msg []byte) []byte {
	return binary.LittleEndian.AppendUint32(msg, crc32.Checksum(msg, castagnoli))
}

func appendHeader(dst []byte, length, requestID, responseTo, opCode int32) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(length))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(requestID))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(responseTo))
	return binary.LittleEndian.AppendUint32(dst, uint32(opCode))
}
