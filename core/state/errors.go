package state

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// Error kinds. Every error a Workspace or Store returns for bad input is an
// *Error whose Kind is one of these, so callers test with errors.Is:
//
//	if errors.Is(err, state.ErrDuplicateKey) { ... }
var (
	ErrSyntax          = errors.New("SQL syntax error")
	ErrNoSuchTable     = errors.New("no such table")
	ErrNoSuchColumn    = errors.New("no such column")
	ErrDuplicateKey    = errors.New("duplicate key")
	ErrNotNull         = errors.New("NULL in a NOT NULL column")
	ErrTypeMismatch    = errors.New("value does not fit the column type")
	ErrNoPrimaryKey    = errors.New("table has no primary key")
	ErrReadOnlySchema  = errors.New("schema changes are only allowed while loading")
	ErrUnitInProgress  = errors.New("a unit of work is in progress on this workspace")
	ErrUnitDone        = errors.New("unit of work already committed or rolled back")
	ErrForeignStore    = errors.New("version belongs to another store")
	ErrBadArgument     = errors.New("bad bound argument")
	ErrBadImport       = errors.New("malformed state JSON")
	ErrStatementFailed = errors.New("statement failed")
	// ErrDenied: a Sandbox refused the statement (a table its policy does
	// not allow, a refused function, a clock or random function with no
	// virtual clock or stream bound).
	ErrDenied = errors.New("denied")
	// ErrResourceLimit: a statement exceeded one of its Sandbox's Limits.
	ErrResourceLimit = errors.New("SQL resource limit exceeded")
)

// Error is a failed state operation. Kind is one of the Err* values above;
// Table and Column name the object involved when known; Statement is the SQL
// text (never with bound values spliced in); Err is the underlying engine
// error. A failed statement or unit never changes the workspace.
type Error struct {
	Kind      error
	Table     string
	Column    string
	Statement string
	// Path is the workspace path involved in a file error ("." for the
	// root); Limit names the cap of an ErrFileLimit (LimitFileBytes, ...).
	Path  string
	Limit string
	Err   error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("state: ")
	b.WriteString(e.Kind.Error())
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	if e.Table != "" {
		fmt.Fprintf(&b, " (table %s)", e.Table)
	}
	if e.Path != "" && (e.Err == nil || !strings.Contains(e.Err.Error(), e.Path)) {
		fmt.Fprintf(&b, " (path %q)", e.Path)
	}
	if e.Statement != "" {
		s := e.Statement
		if len(s) > 200 {
			s = s[:200] + "..."
		}
		fmt.Fprintf(&b, " in %q", s)
	}
	return b.String()
}

// Is matches the error's Kind.
func (e *Error) Is(target error) bool { return target == e.Kind }

// Unwrap returns the engine error.
func (e *Error) Unwrap() error { return e.Err }

// classify wraps an engine error in an *Error with the right Kind.
func classify(err error, stmt string) error {
	if err == nil {
		return nil
	}
	var se *Error
	if errors.As(err, &se) {
		if se.Statement == "" {
			c := *se
			c.Statement = stmt
			return &c
		}
		return se
	}
	inner := sql.UnwrapError(err)
	if errors.As(inner, &se) { // the engine wrapped one of ours
		c := *se
		c.Statement = stmt
		return &c
	}
	e := &Error{Kind: ErrStatementFailed, Statement: stmt, Err: err}
	msg := err.Error()
	var uk sql.UniqueKeyError
	switch {
	case sql.ErrSyntaxError.Is(inner) || strings.Contains(msg, "syntax error"):
		e.Kind = ErrSyntax
	case sql.ErrTableNotFound.Is(inner):
		e.Kind = ErrNoSuchTable
	case sql.ErrColumnNotFound.Is(inner) || sql.ErrUnknownColumn.Is(inner) || sql.ErrTableColumnNotFound.Is(inner):
		e.Kind = ErrNoSuchColumn
	case sql.ErrPrimaryKeyViolation.Is(inner) || sql.ErrUniqueKeyViolation.Is(inner) || errors.As(inner, &uk) ||
		sql.ErrDuplicateEntry.Is(inner):
		e.Kind = ErrDuplicateKey
	case sql.ErrInsertIntoNonNullableProvidedNull.Is(inner) || sql.ErrInsertIntoNonNullableDefaultNullColumn.Is(inner):
		e.Kind = ErrNotNull
	case isTypeError(inner, msg):
		e.Kind = ErrTypeMismatch
	}
	return e
}

func isTypeError(err error, msg string) bool {
	if _, ok := err.(sql.WrappedTypeConversionError); ok {
		return true
	}
	switch {
	case sql.ErrInvalidValue.Is(err), sql.ErrValueOutOfRange.Is(err),
		sql.ErrInvalidJSONText.Is(err), types.ErrConvertingToTime.Is(err), sql.ErrInvalidType.Is(err):
		return true
	}
	for _, s := range []string{"out of range", "too long", "too large", "error converting", "invalid type", "incorrect", "Truncated", "could not convert", "invalid value", "is not valid for"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
