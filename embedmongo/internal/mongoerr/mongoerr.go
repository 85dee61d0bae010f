// Package mongoerr holds the server errors the engine answers with: MongoDB's numeric codes and
// their codeNames, so drivers and the bank's code can branch on them exactly as against mongod.
package mongoerr

import (
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Codes used by the engine (from mongod's error_codes.yml).
const (
	InternalError                   int32 = 1
	BadValue                        int32 = 2
	NoSuchKey                       int32 = 4
	FailedToParse                   int32 = 9
	TypeMismatch                    int32 = 14
	Overflow                        int32 = 15
	InvalidLength                   int32 = 16
	IllegalOperation                int32 = 20
	NamespaceNotFound               int32 = 26
	IndexNotFound                   int32 = 27
	PathNotViable                   int32 = 28
	ConflictingUpdateOperators      int32 = 40
	CursorNotFound                  int32 = 43
	NamespaceExists                 int32 = 48
	MaxTimeMSExpired                int32 = 50
	DollarPrefixedFieldName         int32 = 52
	InvalidIdField                  int32 = 53
	NotSingleValueField             int32 = 54
	EmptyFieldName                  int32 = 56
	DotsInFieldName                 int32 = 57
	CommandNotFound                 int32 = 59
	ImmutableField                  int32 = 66
	CannotCreateIndex               int32 = 67
	IndexAlreadyExists              int32 = 68
	InvalidOptions                  int32 = 72
	InvalidNamespace                int32 = 73
	IndexOptionsConflict            int32 = 85
	IndexKeySpecsConflict           int32 = 86
	ShutdownInProgress              int32 = 91
	OperationFailed                 int32 = 96
	WriteConflict                   int32 = 112
	CommandNotSupported             int32 = 115
	DocumentValidationFailure       int32 = 121
	NotImplemented                  int32 = 238
	ConversionFailure               int32 = 241
	Location40414                   int32 = 40414
	BSONObjectTooLarge              int32 = 10334
	DuplicateKey                    int32 = 11000
	UnknownError                    int32 = 8
	Unauthorized                    int32 = 13
	OutOfDiskSpace                  int32 = 14031
	InterruptedAtShutdown           int32 = 11600
	NotWritablePrimary              int32 = 10107
	InvalidIndexSpecificationOption int32 = 197
)

var names = map[int32]string{
	InternalError: "InternalError", BadValue: "BadValue", NoSuchKey: "NoSuchKey",
	FailedToParse: "FailedToParse", TypeMismatch: "TypeMismatch", Overflow: "Overflow",
	InvalidLength: "InvalidLength", IllegalOperation: "IllegalOperation",
	NamespaceNotFound: "NamespaceNotFound", IndexNotFound: "IndexNotFound",
	PathNotViable: "PathNotViable", ConflictingUpdateOperators: "ConflictingUpdateOperators",
	CursorNotFound: "CursorNotFound", NamespaceExists: "NamespaceExists",
	MaxTimeMSExpired: "MaxTimeMSExpired", DollarPrefixedFieldName: "DollarPrefixedFieldName",
	InvalidIdField: "InvalidIdField", NotSingleValueField: "NotSingleValueField",
	EmptyFieldName: "EmptyFieldName", DotsInFieldName: "DotsInFieldName",
	CommandNotFound: "CommandNotFound", ImmutableField: "ImmutableField",
	CannotCreateIndex: "CannotCreateIndex", IndexAlreadyExists: "IndexAlreadyExists",
	InvalidOptions: "InvalidOptions", InvalidNamespace: "InvalidNamespace",
	IndexOptionsConflict: "IndexOptionsConflict", IndexKeySpecsConflict: "IndexKeySpecsConflict",
	ShutdownInProgress: "ShutdownInProgress", OperationFailed: "OperationFailed",
	WriteConflict: "WriteConflict", CommandNotSupported: "CommandNotSupported",
	DocumentValidationFailure: "DocumentValidationFailure", NotImplemented: "NotImplemented",
	ConversionFailure: "ConversionFailure", Location40414: "Location40414",
	BSONObjectTooLarge: "BSONObjectTooLarge", DuplicateKey: "DuplicateKey",
	UnknownError: "UnknownError", Unauthorized: "Unauthorized", OutOfDiskSpace: "OutOfDiskSpace",
	InterruptedAtShutdown: "InterruptedAtShutdown", NotWritablePrimary: "NotWritablePrimary",
	InvalidIndexSpecificationOption: "InvalidIndexSpecificationOption",
}

// Name returns the codeName mongod reports for code; location codes (e.g. 31254) are named
// "Location<code>", as mongod does.
func Name(code int32) string {
	if n, ok := names[code]; ok {
		return n
	}
	return fmt.Sprintf("Location%d", code)
}

// Error is a server error reply: {ok: 0, errmsg, code, codeName, ...Extra}.
type Error struct {
	Code  int32
	Name  string
	Msg   string
	Extra bson.D // extra reply fields, e.g. keyPattern and keyValue for DuplicateKey
}

func (e *Error) Error() string { return fmt.Sprintf("%s (%d): %s", e.Name, e.Code, e.Msg) }

// New returns an Error with code's codeName and a formatted message.
func New(code int32, format string, args ...any) *Error {
	return &Error{Code: code, Name: Name(code), Msg: fmt.Sprintf(format, args...)}
}

// As extracts an *Error from err; any other error becomes an InternalError (never nil for non-nil err).
func As(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: InternalError, Name: Name(InternalError), Msg: err.Error()}
}

// Is reports whether err is a server error with the given code.
func Is(err error, code int32) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}
