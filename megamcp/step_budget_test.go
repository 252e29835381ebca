package megamcp

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/sdk/failure"
)

// A synthesized server's call out of its step budget keeps its kind in
// ledger records and admin errors (step_budget, not internal), answers 502
// like the other module failures, and is a tool failure over MCP.
func TestStepBudgetKind(t *testing.T) {
	err := &module.CallError{Tool: "spin", Kind: module.ErrStepBudget, Message: "internal error: tool spin ran out of its step budget (20000000 steps)", Code: "step_budget"}
	if k := ErrorKind(err); k != failure.StepBudget {
		t.Errorf("ErrorKind = %q, want step_budget", k)
	}
	if got := errorKind(err); got != "step_budget" {
		t.Errorf("errorKind = %q", got)
	}
	if got := httpStatus(err); got != http.StatusBadGateway {
		t.Errorf("httpStatus = %d, want 502", got)
	}
	var je *jsonrpc.Error
	if !errors.As(protocolError(err), &je) || je.Code != CodeToolFailure || !strings.Contains(string(je.Data), `"kind":"step_budget"`) {
		t.Errorf("MCP error = %+v, want code %d with kind step_budget", je, CodeToolFailure)
	}
}
