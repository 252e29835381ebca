package rand

import (
	"context"
	"fmt"
	"io"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// ModuleName is the import namespace of this library.
const ModuleName = "weft_rand_v1"

type ctxKey struct{}

// WithSource binds the deterministic random stream r to the guest calls made
// with the returned context.
func WithSource(ctx context.Context, r io.Reader) context.Context {
	return context.WithValue(ctx, ctxKey{}, r)
}

// FromContext returns the stream bound to ctx, or nil.
func FromContext(ctx context.Context) io.Reader {
	r, _ := ctx.Value(ctxKey{}).(io.Reader)
	return r
}

// Fill fills p from the stream of ctx; with no stream bound p is zeroed (the
// output stays deterministic).
func Fill(ctx context.Context, p []byte) error {
	r := FromContext(ctx)
	if r == nil {
		clear(p)
		return nil
	}
	_, err := io.ReadFull(r, p)
	return err
}

// HostModule returns the builder of the weft_rand_v1 host module.
func HostModule(r wazero.Runtime) wazero.HostModuleBuilder {
	return r.NewHostModuleBuilder(ModuleName).
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, stack []uint64) {
			ptr, n := api.DecodeU32(stack[0]), api.DecodeU32(stack[1])
			buf, ok := m.Memory().Read(ptr, n)
			if !ok {
				panic(fmt.Errorf("%s.fill: buffer [%d, +%d) out of guest memory", ModuleName, ptr, n))
			}
			if err := Fill(ctx, buf); err != nil {
				panic(fmt.Errorf("%s.fill: %w", ModuleName, err))
			}
		}), []api.ValueType{api.ValueTypeI32, api.ValueTypeI32}, nil).
		WithParameterNames("ptr", "len").
		Export("fill")
}

// Instantiate instantiates weft_rand_v1 in r.
func Instantiate(ctx context.Context, r wazero.Runtime) (api.Module, error) {
	return HostModule(r).Instantiate(ctx)
}
