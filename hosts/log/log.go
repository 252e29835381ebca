package log

import (
	"context"
	"fmt"
	"math"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
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

// Logger receives a call's log records and progress notifications.
type Logger interface {
	Log(level int, msg string)
	Progress(progress, total float64, msg string)
}

type ctxKey struct{}

// WithLogger binds l to the guest calls made with the returned context.
func WithLogger(ctx context.Context, l Logger) context.Context {
	return context.WithValue(ctx, ctxKey{}, l)
}

// FromContext returns the logger bound to ctx, or nil.
func FromContext(ctx context.Context) Logger {
	l, _ := ctx.Value(ctxKey{}).(Logger)
	return l
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

// HostModule returns the builder of the weft_log_v1 host module. Records of
// a call with no bound logger are dropped.
func HostModule(r wazero.Runtime) wazero.HostModuleBuilder {
	i32, f64 := api.ValueTypeI32, api.ValueTypeF64
	return r.NewHostModuleBuilder(ModuleName).
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, stack []uint64) {
			level := int(int32(api.DecodeU32(stack[0])))
			msg := read(m, "write", api.DecodeU32(stack[1]), api.DecodeU32(stack[2]))
			if l := FromContext(ctx); l != nil {
				l.Log(min(max(level, Debug), Error), msg)
			}
		}), []api.ValueType{i32, i32, i32}, nil).
		WithParameterNames("level", "ptr", "len").
		Export("write").
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, stack []uint64) {
			p, total := api.DecodeF64(stack[0]), api.DecodeF64(stack[1])
			msg := read(m, "progress", api.DecodeU32(stack[2]), api.DecodeU32(stack[3]))
			if math.IsNaN(p) || math.IsNaN(total) {
				return
			}
			if l := FromContext(ctx); l != nil {
				l.Progress(p, total, msg)
			}
		}), []api.ValueType{f64, f64, i32, i32}, nil).
		WithParameterNames("progress", "total", "msg_ptr", "msg_len").
		Export("progress")
}

// Instantiate instantiates weft_log_v1 in r.
func Instantiate(ctx context.Context, r wazero.Runtime) (api.Module, error) {
	return HostModule(r).Instantiate(ctx)
}
