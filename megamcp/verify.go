package megamcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/weft-dev/weft/core/state"
)

// Check is one server-side verification check, run with privileged access:
// every table of the session's state (verifier-only tables included, which
// no module and no agent can reach) and its whole ledger. Exactly one of
// SQL, Hash or Tool is set.
type Check struct {
	Name string `json:"name"`
	// SQL is a query run on a private fork of the session's current state;
	// the check passes when its rows, as JSON arrays of values in the export
	// representation (state.PlainValue: integers, floats, decimals as
	// strings), equal Expect.
	SQL    string          `json:"sql,omitempty"`
	Expect json.RawMessage `json:"expect,omitempty"`
	// Hash passes when the session's current state hash equals it.
	Hash string `json:"hash,omitempty"`
	// Tool passes when the ledger holds a successful call of that tool (its
	// exposed or module-local name) whose arguments contain Arguments (an
	// object: every key present with an equal value). Times, if > 0, asks
	// for exactly that many such calls.
	Tool      string          `json:"tool,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Times     int             `json:"times,omitempty"`
}

// CheckResult is the outcome of one Check: Got holds what was observed
// (rows, hash or number of matching calls).
type CheckResult struct {
	Name    string          `json:"name"`
	Passed  bool            `json:"passed"`
	Got     json.RawMessage `json:"got,omitempty"`
	Message string          `json:"message,omitempty"`
}

// VerifyResult holds one CheckResult per check, in order, and whether all
// passed.
type VerifyResult struct {
	Passed bool          `json:"passed"`
	Checks []CheckResult `json:"checks"`
	Hash   string        `json:"hash"` // the state the checks saw
}

// Verify runs checks against session id's current state and ledger. It
// changes nothing. gen > 0 is fenced like calls. A malformed check (none or
// several of SQL/Hash/Tool, bad JSON) is ErrBadRequest; a failing SQL
// statement fails its check with the error as Message.
func (s *Server) Verify(ctx context.Context, id string, gen uint64, checks []Check) (*VerifyResult, error) {
	ss, err := s.Session(id)
	if err != nil {
		return nil, err
	}
	if err := ss.lock(ctx, gen); err != nil {
		return nil, err
	}
	v, err := ss.ws.Snapshot()
	ss.mu.Unlock()
	if err != nil {
		return nil, err
	}
	var recs []Record
	out := &VerifyResult{Passed: true, Checks: []CheckResult{}, Hash: v.Hash().String()}
	for i, c := range checks {
		n := 0
		for _, set := range []bool{c.SQL != "", c.Hash != "", c.Tool != ""} {
			if set {
				n++
			}
		}
		if n != 1 {
			return nil, fmt.Errorf("%w: check %d (%q) needs exactly one of sql, hash, tool", ErrBadRequest, i, c.Name)
		}
		r := CheckResult{Name: c.Name}
		switch {
		case c.SQL != "":
			var want any
			if len(c.Expect) > 0 {
				if err := json.Unmarshal(c.Expect, &want); err != nil {
					return nil, fmt.Errorf("%w: check %q: expect: %v", ErrBadRequest, c.Name, err)
				}
			}
			rows, err := s.verifySQL(ctx, v, ss.clock.Now(), c.SQL)
			if err != nil {
				r.Message = err.Error()
				break
			}
			plain := make([][]any, len(rows.Values))
			for i, row := range rows.Values {
				plain[i] = make([]any, len(row))
				for j, x := range row {
					plain[i][j] = state.PlainValue(x)
				}
			}
			r.Got = mustJSON(plain)
			var got any
			_ = json.Unmarshal(r.Got, &got)
			r.Passed = reflect.DeepEqual(got, want)
			if !r.Passed {
				r.Message = "rows differ from expect"
			}
		case c.Hash != "":
			r.Got = mustJSON(out.Hash)
			r.Passed = c.Hash == out.Hash
			if !r.Passed {
				r.Message = "state hash differs"
			}
		case c.Tool != "":
			var want map[string]any
			if len(c.Arguments) > 0 {
				if err := json.Unmarshal(c.Arguments, &want); err != nil {
					return nil, fmt.Errorf("%w: check %q: arguments must be an object: %v", ErrBadRequest, c.Name, err)
				}
			}
			if recs == nil {
				if recs, err = s.Ledger(ctx, id, 0, 0); err != nil {
					return nil, err
				}
			}
			matches := 0
			for _, rec := range recs {
				if rec.Kind != KindCall || rec.Error != nil || rec.Result == nil || rec.Result.IsError {
					continue
				}
				if rec.Tool != c.Tool && rec.Module+"__"+rec.Tool != c.Tool {
					continue
				}
				var args map[string]any
				_ = json.Unmarshal(rec.Arguments, &args)
				ok := true
				for k, v := range want {
					if !reflect.DeepEqual(args[k], v) {
						ok = false
						break
					}
				}
				if ok {
					matches++
				}
			}
			r.Got = mustJSON(matches)
			if c.Times > 0 {
				r.Passed = matches == c.Times
			} else {
				r.Passed = matches > 0
			}
			if !r.Passed {
				r.Message = fmt.Sprintf("%d matching successful calls of %s", matches, c.Tool)
			}
		}
		out.Passed = out.Passed && r.Passed
		out.Checks = append(out.Checks, r)
	}
	return out, nil
}

// VerifySQLTimeout bounds each SQL check of Verify (the admin API's
// POST /v1/sessions/{id}/verify), whatever the client's own deadline: a
// check still running then fails with a message naming the timeout.
var VerifySQLTimeout = 10 * time.Second

// verifySQL runs one SQL check on a fork of v under VerifySQLTimeout and a
// state.Sandbox without a table policy (the verifier reads every table):
// the SQL limits of docs/abi.md bound what it makes the host compute, NOW()
// reads the session's virtual clock (now), and RAND()/UUID() are refused
// (a check must not depend on chance).
func (s *Server) verifySQL(ctx context.Context, v *state.Version, now time.Time, q string) (*state.Rows, error) {
	ctx, cancel := context.WithTimeout(ctx, VerifySQLTimeout)
	defer cancel()
	sb := &state.Sandbox{Now: func() time.Time { return now }}
	rows, err := s.store.Fork(v).Query(state.WithSandbox(ctx, sb), q)
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return nil, fmt.Errorf("verify SQL stopped at the server-side timeout of %s: %w", VerifySQLTimeout, err)
	}
	return rows, err
}
