package abi

import (
	"encoding/json"
)

// SQL error kinds of weft_sql_v1, the values of SQLError.Kind. A statement
// that failed with any of them had no effect.
const (
	KindDuplicateKey = "duplicate_key"
	KindNoSuchTable  = "no_such_table"
	KindNoSuchColumn = "no_such_column"
	KindSyntax       = "syntax"
	KindTypeMismatch = "type_mismatch"
	KindNotNull      = "not_null"
	KindDenied       = "denied" // a table the manifest does not declare, or a write to one it only reads
	KindOther        = "other"
)

// Column types of an SQLResponse (its Types), and how a cell of each is
// written: int, uint and float as JSON numbers; decimal as a string keeping
// its scale ("12.30"); string; bytes as base64; time as RFC 3339 UTC; json
// as the JSON value; null for an all-NULL column. A NULL cell is null in
// every type.
const (
	TypeInt     = "int"
	TypeUint    = "uint"
	TypeFloat   = "float"
	TypeDecimal = "decimal"
	TypeString  = "string"
	TypeBytes   = "bytes"
	TypeTime    = "time"
	TypeJSON    = "json"
	TypeNull    = "null"
)

// Tags of a TypedValue argument.
const (
	TagBytes   = "bytes"   // V is base64
	TagTime    = "time"    // V is RFC 3339 with nanoseconds, UTC: 2006-01-02T15:04:05.999999999Z
	TagDecimal = "decimal" // V is a decimal number as text, "12.30"
)

// SQLRequest is a weft_sql_v1 query request: one statement with ?
// placeholders bound in order (never spliced) to Args. An argument is a
// JSON number, string, bool or null, or a TypedValue object.
type SQLRequest struct {
	SQL  string            `json:"sql"`
	Args []json.RawMessage `json:"args"`
}

// TypedValue is an argument JSON has no scalar for: {"t": tag, "v": text}
// with one of the Tag* tags.
type TypedValue struct {
	T string `json:"t"`
	V string `json:"v"`
}

// SQLResponse is a weft_sql_v1 query response. Cell is the Go type of a
// cell: the host encodes any (Go values of the column's type), a guest
// decodes json.RawMessage (each cell's JSON text) and converts by Types.
// The host always writes every member (empty lists, never null), "error"
// null on success.
type SQLResponse[Cell any] struct {
	Columns      []string  `json:"columns"`
	Types        []string  `json:"types"` // one of the Type* constants per column
	Rows         [][]Cell  `json:"rows"`
	RowsAffected int64     `json:"rows_affected"`
	LastInsertID uint64    `json:"last_insert_id"`
	Error        *SQLError `json:"error"`
}

// SQLError is the "error" of a failed SQLResponse: the statement the host
// refused or that failed, which had no effect.
type SQLError struct {
	Kind    string `json:"kind"` // one of the Kind* constants
	Message string `json:"message"`
}

// Error is "sql <kind>: <message>".
func (e *SQLError) Error() string { return "sql " + e.Kind + ": " + e.Message }
