package rand

import (
	"context"
	"fmt"
	"io"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/weft-dev/weft/hosts"
)

// ModuleName is the import namespace of this library.
const ModuleName = "weft_rand_v1"

// Fill fills p from the random stream of the call environment bound to ctx
// (hosts.Call.Rand); with no stream bound p is zeroed (the output stays
// deterministic).
func Fill(ctx context.Context, p []byte) error {
	c := hosts.From(ctx)
	if c == nil || c.Rand == nil {
		clear(p)
		return nil
	}
	_, err := io.ReadFull(c.Rand, p)
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
