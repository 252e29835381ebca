package clock

import (
	"context"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// ModuleName is the import namespace of this library.
const ModuleName = "weft_clock_v1"

// Clock is a session's virtual clock.
type Clock interface {
	// Now returns nanoseconds since the Unix epoch.
	Now() int64
}

// Func adapts a function to Clock.
type Func func() int64

// Now calls f.
func (f Func) Now() int64 { return f() }

type ctxKey struct{}

// WithClock binds c to the guest calls made with the returned context.
func WithClock(ctx context.Context, c Clock) context.Context {
	return context.WithValue(ctx, ctxKey{}, c)
}

// FromContext returns the clock bound to ctx, or nil.
func FromContext(ctx context.Context) Clock {
	c, _ := ctx.Value(ctxKey{}).(Clock)
	return c
}

// Now is weft_clock_v1.now for the call of ctx: 0 (the epoch) when no clock
// is bound.
func Now(ctx context.Context) int64 {
	if c := FromContext(ctx); c != nil {
		return c.Now()
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
