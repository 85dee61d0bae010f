package bsonkit

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// A direct BSON codec for the engine's value model. The driver's reflection-based
// bson.Unmarshal/Marshal were a fifth of the engine's CPU per update in profiles; this codec
// produces exactly the same values (codec_test.go checks it against the driver) without
// reflection. Types outside the model (Go ints, structs, maps) fall back to the driver.

var errCorrupt = errors.New("bsonkit: corrupt BSON")

// Decode parses BSON bytes into a document.
func Decode(raw []byte) (bson.D, error) {
	d, err := decodeDoc(raw)
	if err != nil {
		return nil, err
	}
	return d, nil
}

func decodeDoc(b []byte) (bson.D, error) {
	if len(b) < 5 {
		return nil, errCorrupt
	}
	size := int(int32(binary.LittleEndian.Uint32(b)))
	if size < 5 || size > len(b) || b[size-1] != 0 {
		return nil, errCorrupt
	}
	body := b[4 : size-1]
	d := make(bson.D, 0, countElements(body))
	for len(body) > 0 {
		t := body[0]
		key, n, err := fieldName(body[1:])
		if err != nil {
			return nil, err
		}
		body = body[1+n:]
		v, used, err := decodeValue(t, body)
		if err != nil {
			return nil, err
		}
		body = body[used:]
		d = append(d, bson.E{Key: key, Value: v})
	}
	return d, nil
}

func decodeArray(b []byte) (bson.A, error) {
	if len(b) < 5 {
		return nil, errCorrupt
	}
	size := int(int32(binary.LittleEndian.Uint32(b)))
	if size < 5 || size > len(b) || b[size-1] != 0 {
		return nil, errCorrupt
	}
	body := b[4 : size-1]
	a := make(bson.A, 0, countElements(body))
	for len(body) > 0 {
		t := body[0]
		n, err := cstringLen(body[1:])
		if err != nil {
			return nil, err
		}
		body = body[1+n:]
		v, used, err := decodeValue(t, body)
		if err != nil {
			return nil, err
		}
		body = body[used:]
		a = append(a, v)
	}
	return a, nil
}

func cstring(b []byte) (string, int, error) {
	n, err := cstringLen(b)
	if err != nil {
		return "", 0, err
	}
	return string(b[:n-1]), n, nil
}

// countElements counts the elements of a document's or array's body, to size its decoded
// form at once: most are small (an operator and its argument), and growing from a guess
// allocated several times or too much. A malformed body counts what it can; decoding then
// reports the error.
func countElements(body []byte) int {
	n := 0
	for len(body) > 0 {
		k, err := cstringLen(body[1:])
		if err != nil {
			return n
		}
		used, err := valueLen(body[0], body[1+k:])
		if err != nil {
			return n
		}
		body = body[1+k+used:]
		n++
	}
	return n
}

// cstringLen is the length of the NUL-terminated string at the start of b, NUL included.
func cstringLen(b []byte) (int, error) {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return i + 1, nil
	}
	return 0, errCorrupt
}

// fieldName is cstring for a field name: names repeat from document to document, so the
// common ones are shared strings (fieldNames) rather than an allocation per field per decode.
func fieldName(b []byte) (string, int, error) {
	n, err := cstringLen(b)
	if err != nil {
		return "", 0, err
	}
	return fieldNames.intern(b[:n-1]), n, nil
}

// stringLen is the encoded length of the string value at the start of b (length prefix and
// NUL included).
func stringLen(b []byte) (int, error) {
	if len(b) < 5 {
		return 0, errCorrupt
	}
	n := int(int32(binary.LittleEndian.Uint32(b)))
	if n < 1 || 4+n > len(b) || b[4+n-1] != 0 {
		return 0, errCorrupt
	}
	return 4 + n, nil
}

func lenString(b []byte) (string, int, error) {
	n, err := stringLen(b)
	if err != nil {
		return "", 0, err
	}
	return string(b[4 : n-1]), n, nil
}

func docLen(b []byte) (int, error) {
	if len(b) < 5 {
		return 0, errCorrupt
	}
	n := int(int32(binary.LittleEndian.Uint32(b)))
	if n < 5 || n > len(b) {
		return 0, errCorrupt
	}
	return n, nil
}

func need(b []byte, n int) error {
	if len(b) < n {
		return errCorrupt
	}
	return nil
}

// decodeValue decodes one value of type t at the start of b and returns how many bytes it used.
func decodeValue(t byte, b []byte) (any, int, error) {
	switch t {
	case 0x01:
		if err := need(b, 8); err != nil {
			return nil, 0, err
		}
		return math.Float64frombits(binary.LittleEndian.Uint64(b)), 8, nil
	case 0x02:
		s, n, err := lenString(b)
		return s, n, err
	case 0x03:
		n, err := docLen(b)
		if err != nil {
			return nil, 0, err
		}
		d, err := decodeDoc(b[:n])
		return d, n, err
	case 0x04:
		n, err := docLen(b)
		if err != nil {
			return nil, 0, err
		}
		a, err := decodeArray(b[:n])
		return a, n, err
	case 0x05:
		if err := need(b, 5); err != nil {
			return nil, 0, err
		}
		n := int(int32(binary.LittleEndian.Uint32(b)))
		if n < 0 || 5+n > len(b) {
			return nil, 0, errCorrupt
		}
		sub := b[4]
		data := b[5 : 5+n]
		if sub == 0x02 { // the old binary subtype repeats the length inside
			if len(data) < 4 {
				return nil, 0, errCorrupt
			}
			data = data[4:]
		}
		return bson.Binary{Subtype: sub, Data: append([]byte(nil), data...)}, 5 + n, nil
	case 0x06:
		return bson.Undefined{}, 0, nil
	case 0x07:
		if err := need(b, 12); err != nil {
			return nil, 0, err
		}
		var oid bson.ObjectID
		copy(oid[:], b[:12])
		return oid, 12, nil
	case 0x08:
		if err := need(b, 1); err != nil {
			return nil, 0, err
		}
		return b[0] != 0, 1, nil
	case 0x09:
		if err := need(b, 8); err != nil {
			return nil, 0, err
		}
		return bson.DateTime(int64(binary.LittleEndian.Uint64(b))), 8, nil
	case 0x0A:
		return nil, 0, nil
	case 0x0B:
		p, n1, err := cstring(b)
		if err != nil {
			return nil, 0, err
		}
		o, n2, err := cstring(b[n1:])
		if err != nil {
			return nil, 0, err
		}
		return bson.Regex{Pattern: p, Options: o}, n1 + n2, nil
	case 0x0C:
		s, n, err := lenString(b)
		if err != nil {
			return nil, 0, err
		}
		if err := need(b[n:], 12); err != nil {
			return nil, 0, err
		}
		var oid bson.ObjectID
		copy(oid[:], b[n:n+12])
		return bson.DBPointer{DB: s, Pointer: oid}, n + 12, nil
	case 0x0D:
		s, n, err := lenString(b)
		return bson.JavaScript(s), n, err
	case 0x0E:
		s, n, err := lenString(b)
		return bson.Symbol(s), n, err
	case 0x0F:
		if err := need(b, 4); err != nil {
			return nil, 0, err
		}
		total := int(int32(binary.LittleEndian.Uint32(b)))
		if total < 14 || total > len(b) {
			return nil, 0, errCorrupt
		}
		code, n, err := lenString(b[4:total])
		if err != nil {
			return nil, 0, err
		}
		scope, err := decodeDoc(b[4+n : total])
		if err != nil {
			return nil, 0, err
		}
		return bson.CodeWithScope{Code: bson.JavaScript(code), Scope: scope}, total, nil
	case 0x10:
		if err := need(b, 4); err != nil {
			return nil, 0, err
		}
		return int32(binary.LittleEndian.Uint32(b)), 4, nil
	case 0x11:
		if err := need(b, 8); err != nil {
			return nil, 0, err
		}
		return bson.Timestamp{I: binary.LittleEndian.Uint32(b), T: binary.LittleEndian.Uint32(b[4:])}, 8, nil
	case 0x12:
		if err := need(b, 8); err != nil {
			return nil, 0, err
		}
		return int64(binary.LittleEndian.Uint64(b)), 8, nil
	case 0x13:
		if err := need(b, 16); err != nil {
			return nil, 0, err
		}
		lo, hi := binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])
		return bson.NewDecimal128(hi, lo), 16, nil
	case 0xFF:
		return bson.MinKey{}, 0, nil
	case 0x7F:
		return bson.MaxKey{}, 0, nil
	}
	return nil, 0, fmt.Errorf("bsonkit: unknown BSON type 0x%02x", t)
}

// Encode serializes a document to BSON bytes, in a buffer of the right size: an encoding is
// often stored as it is, and growing one by doubling left up to half of it unused.
func Encode(d bson.D) ([]byte, error) {
	return AppendDoc(make([]byte, 0, docSize(d)), d)
}

// docSize is the encoded size of d, exact for the values Encode knows itself; it only sizes
// the buffer (one encoded by the driver grows it).
func docSize(d bson.D) int {
	n := 5
	for _, e := range d {
		n += 2 + len(e.Key) + valueSize(e.Value)
	}
	return n
}

func valueSize(v any) int {
	switch x := v.(type) {
	case float64, bson.DateTime, int64, bson.Timestamp:
		return 8
	case string:
		return 5 + len(x)
	case bson.Symbol:
		return 5 + len(x)
	case bson.JavaScript:
		return 5 + len(x)
	case bson.D:
		return docSize(x)
	case bson.A:
		n := 5
		for i, e := range x {
			n += 2 + indexLen(i) + valueSize(e)
		}
		return n
	case bson.Binary:
		if x.Subtype == 0x02 {
			return 9 + len(x.Data)
		}
		return 5 + len(x.Data)
	case bson.ObjectID:
		return 12
	case bool:
		return 1
	case int32:
		return 4
	case bson.Decimal128:
		return 16
	case bson.Regex:
		return len(x.Pattern) + len(x.Options) + 2
	case bson.DBPointer:
		return 17 + len(x.DB)
	}
	return 0
}

// indexLen is the length of array index i written as a key.
func indexLen(i int) int {
	n := 1
	for ; i >= 10; i /= 10 {
		n++
	}
	return n
}

// AppendDoc appends the BSON encoding of d to dst.
func AppendDoc(dst []byte, d bson.D) ([]byte, error) {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	var err error
	for _, e := range d {
		if dst, err = appendElement(dst, e.Key, e.Value); err != nil {
			return nil, err
		}
	}
	dst = append(dst, 0)
	binary.LittleEndian.PutUint32(dst[start:], uint32(len(dst)-start))
	return dst, nil
}

func appendArray(dst []byte, a bson.A) ([]byte, error) {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	var err error
	var key [20]byte
	for i, v := range a {
		k := appendIndex(key[:0], i)
		if dst, err = appendElement(dst, string(k), v); err != nil {
			return nil, err
		}
	}
	dst = append(dst, 0)
	binary.LittleEndian.PutUint32(dst[start:], uint32(len(dst)-start))
	return dst, nil
}

func appendIndex(b []byte, i int) []byte {
	if i < 10 {
		return append(b, byte('0'+i))
	}
	return fmt.Appendf(b, "%d", i)
}

func appendCString(dst []byte, s string) ([]byte, error) {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return nil, fmt.Errorf("bsonkit: key or pattern %q contains a NUL byte", s)
		}
	}
	return append(append(dst, s...), 0), nil
}

func appendString(dst []byte, s string) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(s)+1))
	return append(append(dst, s...), 0)
}

func appendElement(dst []byte, key string, v any) ([]byte, error) {
	typePos := len(dst)
	dst = append(dst, 0)
	dst, err := appendCString(dst, key)
	if err != nil {
		return nil, err
	}
	var t byte
	switch x := v.(type) {
	case float64:
		t, dst = 0x01, binary.LittleEndian.AppendUint64(dst, math.Float64bits(x))
	case string:
		t, dst = 0x02, appendString(dst, x)
	case bson.D:
		t = 0x03
		if dst, err = AppendDoc(dst, x); err != nil {
			return nil, err
		}
	case bson.A:
		t = 0x04
		if dst, err = appendArray(dst, x); err != nil {
			return nil, err
		}
	case bson.Binary:
		t = 0x05
		data := x.Data
		if x.Subtype == 0x02 {
			dst = binary.LittleEndian.AppendUint32(dst, uint32(len(data)+4))
			dst = append(dst, x.Subtype)
			dst = binary.LittleEndian.AppendUint32(dst, uint32(len(data)))
		} else {
			dst = binary.LittleEndian.AppendUint32(dst, uint32(len(data)))
			dst = append(dst, x.Subtype)
		}
		dst = append(dst, data...)
	case bson.Undefined:
		t = 0x06
	case bson.ObjectID:
		t, dst = 0x07, append(dst, x[:]...)
	case bool:
		t = 0x08
		if x {
			dst = append(dst, 1)
		} else {
			dst = append(dst, 0)
		}
	case bson.DateTime:
		t, dst = 0x09, binary.LittleEndian.AppendUint64(dst, uint64(x))
	case nil, bson.Null:
		t = 0x0A
	case bson.Regex:
		t = 0x0B
		if dst, err = appendCString(dst, x.Pattern); err != nil {
			return nil, err
		}
		if dst, err = appendCString(dst, sortedOptions(x.Options)); err != nil {
			return nil, err
		}
	case bson.DBPointer:
		t = 0x0C
		dst = appendString(dst, x.DB)
		dst = append(dst, x.Pointer[:]...)
	case bson.JavaScript:
		t, dst = 0x0D, appendString(dst, string(x))
	case bson.Symbol:
		t, dst = 0x0E, appendString(dst, string(x))
	case int32:
		t, dst = 0x10, binary.LittleEndian.AppendUint32(dst, uint32(x))
	case bson.Timestamp:
		t = 0x11
		dst = binary.LittleEndian.AppendUint32(dst, x.I)
		dst = binary.LittleEndian.AppendUint32(dst, x.T)
	case int64:
		t, dst = 0x12, binary.LittleEndian.AppendUint64(dst, uint64(x))
	case bson.Decimal128:
		t = 0x13
		hi, lo := x.GetBytes()
		dst = binary.LittleEndian.AppendUint64(dst, lo)
		dst = binary.LittleEndian.AppendUint64(dst, hi)
	case bson.MinKey:
		t = 0xFF
	case bson.MaxKey:
		t = 0x7F
	default:
		// Outside the model (CodeWithScope, Go ints, maps, structs): let the driver encode it.
		raw, err := bson.Marshal(bson.D{{Key: "v", Value: v}})
		if err != nil {
			return nil, err
		}
		// raw = int32 size | type | "v\0" | value | 0
		t = raw[4]
		dst = append(dst, raw[7:len(raw)-1]...)
	}
	dst[typePos] = t
	return dst, nil
}

// sortedOptions orders regex options alphabetically, as the driver does when encoding.
func sortedOptions(o string) string {
	if len(o) < 2 {
		return o
	}
	b := []byte(o)
	for i := 1; i < len(b); i++ {
		for j := i; j > 0 && b[j] < b[j-1]; j-- {
			b[j], b[j-1] = b[j-1], b[j]
		}
	}
	return string(b)
}

// DecodeFields decodes only the top-level fields for which want returns true, skipping the
// others without building them: storage uses it to find a stored document's index keys.
func DecodeFields(raw []byte, want func(key string) bool) (bson.D, error) {
	if len(raw) < 5 {
		return nil, errCorrupt
	}
	size := int(int32(binary.LittleEndian.Uint32(raw)))
	if size < 5 || size > len(raw) || raw[size-1] != 0 {
		return nil, errCorrupt
	}
	body := raw[4 : size-1]
	var d bson.D
	for len(body) > 0 {
		t := body[0]
		key, n, err := fieldName(body[1:])
		if err != nil {
			return nil, err
		}
		body = body[1+n:]
		if !want(key) {
			used, err := valueLen(t, body)
			if err != nil {
				return nil, err
			}
			body = body[used:]
			continue
		}
		v, used, err := decodeValue(t, body)
		if err != nil {
			return nil, err
		}
		body = body[used:]
		d = append(d, bson.E{Key: key, Value: v})
	}
	return d, nil
}

// valueLen is the encoded length of a value of type t at the start of b.
func valueLen(t byte, b []byte) (int, error) {
	switch t {
	case 0x06, 0x0A, 0xFF, 0x7F:
		return 0, nil
	case 0x08:
		return 1, need(b, 1)
	case 0x10:
		return 4, need(b, 4)
	case 0x01, 0x09, 0x11, 0x12:
		return 8, need(b, 8)
	case 0x07:
		return 12, need(b, 12)
	case 0x13:
		return 16, need(b, 16)
	case 0x02, 0x0D, 0x0E:
		return stringLen(b)
	case 0x03, 0x04:
		return docLen(b)
	case 0x05:
		if err := need(b, 5); err != nil {
			return 0, err
		}
		n := int(int32(binary.LittleEndian.Uint32(b)))
		if n < 0 || 5+n > len(b) {
			return 0, errCorrupt
		}
		return 5 + n, nil
	case 0x0B:
		n1, err := cstringLen(b)
		if err != nil {
			return 0, err
		}
		n2, err := cstringLen(b[n1:])
		return n1 + n2, err
	case 0x0C:
		n, err := stringLen(b)
		if err != nil {
			return 0, err
		}
		return n + 12, need(b[n:], 12)
	case 0x0F:
		return docLen(b) // same int32 total length prefix
	}
	return 0, fmt.Errorf("bsonkit: unknown BSON type 0x%02x", t)
}
