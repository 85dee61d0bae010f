package embedmongo

import (
	"bufio"
	"errors"
	"io"
	"net"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
	"github.com/bankd/bankd/embedmongo/internal/wire"
)

// conn is one client connection. Requests on a connection are answered in order, one at a time,
// as drivers expect.
type conn struct {
	srv     *Server
	nc      net.Conn
	id      int64
	appName string // from the handshake's client metadata, for failCommand's appName filter
}

// errCloseConn asks the connection loop to hang up without replying (failCommand closeConnection).
var errCloseConn = errors.New("close connection")

func (c *conn) serve() {
	defer c.nc.Close()
	r := bufio.NewReaderSize(c.nc, 64*1024)
	w := bufio.NewWriterSize(c.nc, 64*1024)
	var out []byte
	for {
		msg, err := wire.ReadMessage(r, MaxMessageSizeBytes)
		if err != nil {
			if errors.Is(err, wire.ErrMalformed) {
				c.srv.log.Warn("closing connection: malformed message", "conn", c.id, "remote", c.nc.RemoteAddr().String(), "err", err)
			} else if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				c.srv.log.Debug("connection read failed", "conn", c.id, "err", err)
			}
			return
		}
		out = out[:0]
		reply, err := c.handle(msg)
		if errors.Is(err, errCloseConn) {
			return
		}
		if err != nil {
			c.srv.log.Warn("closing connection", "conn", c.id, "err", err)
			return
		}
		if reply == nil { // moreToCome: the client expects no answer
			continue
		}
		reqID := c.srv.requestID.Add(1)
		if msg.Header.OpCode == wire.OpQuery {
			out = wire.AppendReply(out, reqID, msg.Header.RequestID, reply)
		} else {
			out = wire.AppendMsg(out, reqID, msg.Header.RequestID, 0, reply)
		}
		if _, err := w.Write(out); err != nil {
			return
		}
		if err := w.Flush(); err != nil {
			return
		}
	}
}

// handle runs one request and returns the encoded reply document (nil for no reply).
func (c *conn) handle(msg *wire.Message) ([]byte, error) {
	var cmd bson.D
	var db string
	switch msg.Header.OpCode {
	case wire.OpQuery:
		// Only the legacy handshake (and commands on <db>.$cmd) arrive this way.
		if !strings.HasSuffix(msg.FullCollectionName, ".$cmd") {
			return encodeReply(errorReply(mongoerr.New(mongoerr.CommandNotSupported, "OP_QUERY is only supported for commands")))
		}
		db = strings.TrimSuffix(msg.FullCollectionName, ".$cmd")
		d, err := decodeCommand(msg.Query, nil)
		if err != nil {
			return nil, err
		}
		cmd = unwrapQuery(d)
		name := ""
		if len(cmd) > 0 {
			name = strings.ToLower(cmd[0].Key)
		}
		if name != "hello" && name != "ismaster" {
			return encodeReply(errorReply(mongoerr.New(mongoerr.CommandNotSupported, "OP_QUERY is no longer supported for the %s command; use OP_MSG", cmd[0].Key)))
		}
	case wire.OpMsg:
		d, err := decodeCommand(msg.Body, msg.Sequences)
		if err != nil {
			return nil, err
		}
		cmd = d
		if v, ok := lookup(cmd, "$db"); ok {
			db, _ = v.(string)
		}
		if db == "" {
			return encodeReply(errorReply(mongoerr.New(40571, "OP_MSG requests require a $db argument")))
		}
	}
	reply, err := c.srv.dispatch(c, db, cmd, msg.Header.OpCode == wire.OpQuery)
	if err != nil {
		return nil, err
	}
	if msg.Flags&wire.FlagMoreToCome != 0 {
		return nil, nil
	}
	return encodeReply(reply)
}

// decodeCommand decodes the body and folds document sequences in as array fields.
func decodeCommand(body bson.Raw, seqs []wire.Sequence) (bson.D, error) {
	d, err := bsonkit.Decode(body)
	if err != nil {
		return nil, err
	}
	for _, s := range seqs {
		arr := make(bson.A, 0, len(s.Docs))
		for _, raw := range s.Docs {
			doc, err := bsonkit.Decode(raw)
			if err != nil {
				return nil, err
			}
			arr = append(arr, doc)
		}
		d = append(d, bson.E{Key: s.Identifier, Value: arr})
	}
	return d, nil
}

// unwrapQuery handles the legacy {$query: {...}, $readPreference: ...} wrapping.
func unwrapQuery(d bson.D) bson.D {
	for _, e := range d {
		if e.Key == "$query" || e.Key == "query" {
			if inner, ok := e.Value.(bson.D); ok {
				return inner
			}
		}
	}
	return d
}

func encodeReply(d bson.D) ([]byte, error) {
	b, err := bsonkit.Encode(d)
	if err != nil {
		return bson.Marshal(errorReply(mongoerr.New(mongoerr.InternalError, "cannot encode reply: %v", err)))
	}
	return b, nil
}
