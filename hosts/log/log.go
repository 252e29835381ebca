package log

import (
	"context"
	"fmt"
	"math"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/weft-dev/weft/hosts"
)

// ModuleName is the import namespace of this library.
const ModuleName = "weft_log_v1"

// Levels of write.
const (
	Debug = 0
	Info  = 1
	Warn  = 2
	Error = 3
)

// MaxRecord is the longest record text delivered; longer ones are cut.
const MaxRecord = 64 << 10

// Write delivers one record of the call of ctx to its environment's Log
// (hosts.Call), the level clamped to Debug..Error; dropped when none is
// bound.
func Write(ctx context.Context, level int, msg string) {
	if c := hosts.From(ctx); c != nil && c.Log != nil {
		c.Log(min(max(level, Debug), Error), msg)
	}
}

// Progress delivers one progress notification of the call of ctx to its
// environment's Progress; dropped when none is bound or either number is
// NaN.
func Progress(ctx context.Context, progress, total float64, msg string) {
	if math.IsNaN(progress) || math.IsNaN(total) {
		return
	}
	if c := hosts.From(ctx); c != nil && c.Progress != nil {
		c.Progress(progress, total, msg)
	}
}

func read(m api.Module, fn string, ptr, n uint32) string {
	if n > MaxRecord {
		n = MaxRecord
	}
	b, ok := m.Memory().Read(ptr, n)
	if !ok {
		panic(fmt.Errorf("%s.%s: text [%d, +%d) out of guest memory", ModuleName, fn, ptr, n))
	}
	return string(b)
}

// HostModule returns the builder of the weft_log_v1 host module (Write and
// Progress on the guest's text). Records of a call with no environment are
// dropped.
func HostModule(r wazero.Runtime) wazero.HostModuleBuilder {
	i32, f64 := api.ValueTypeI32, api.ValueTypeF64
	return r.NewHostModuleBuilder(ModuleName).
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, stack []uint64) {
			level := int(int32(api.DecodeU32(stack[0])))
			msg := read(m, "write", api.DecodeU32(stack[1]), api.DecodeU32(stack[2]))
			Write(ctx, level, msg)
		}), []api.ValueType{i32, i32, i32}, nil).
		WithParameterNames("level", "ptr", "len").
		Export("write").
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, stack []uint64) {
			p, total := api.DecodeF64(stack[0]), api.DecodeF64(stack[1])
			msg := read(m, "progress", api.DecodeU32(stack[2]), api.DecodeU32(stack[3]))
			Progress(ctx, p, total, msg)
		}), []api.ValueType{f64, f64, i32, i32}, nil).
		WithParameterNames("progress", "total", "msg_ptr", "msg_len").
		Export("progress")
}

// Instantiate instantiates weft_log_v1 in r.
func Instantiate(ctx context.Context, r wazero.Runtime) (api.Module, error) {
	return HostModule(r).Instantiate(ctx)
}
