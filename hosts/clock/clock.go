package clock

import (
	"context"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/weft-dev/weft/hosts"
)

// ModuleName is the import namespace of this library.
const ModuleName = "weft_clock_v1"

// Now is weft_clock_v1.now for the call of ctx: the Now of its environment
// (hosts.Call), 0 (the epoch) when none is bound.
func Now(ctx context.Context) int64 {
	if c := hosts.From(ctx); c != nil {
		return c.Now
	}
	return 0
}

// HostModule returns the builder of the weft_clock_v1 host module.
func HostModule(r wazero.Runtime) wazero.HostModuleBuilder {
	return r.NewHostModuleBuilder(ModuleName).
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, _ api.Module, stack []uint64) {
			stack[0] = uint64(Now(ctx))
		}), nil, []api.ValueType{api.ValueTypeI64}).
		WithParameterNames().WithResultNames("unix_nanos").
		Export("now")
}

// Instantiate instantiates weft_clock_v1 in r.
func Instantiate(ctx context.Context, r wazero.Runtime) (api.Module, error) {
	return HostModule(r).Instantiate(ctx)
}
