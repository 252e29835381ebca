package paritytest

import (
	"encoding/json"
	"syscall"
	"testing"
	"time"
)

func cpuNow() time.Duration {
	var r syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &r)
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}

func TestScratchCost(t *testing.T) {
	f := setup(t)
	s := f.session()
	for _, c := range []struct{ tool, args string }{
		{"transfer_to_human_agents", `{"summary":"x"}`},
		{"calculate", `{"expression":"2"}`},
		{"calculate", `{"expression":"150.58 + 1042.93"}`},
		{"calculate", `{"expression":"1/3"}`},
		{"get_order_details", `{"order_id":"#W4776164"}`},
		{"get_user_details", `{"user_id":"yusuf_rossi_9620"}`},
	} {
		for k := 0; k < 2; k++ {
			n := 2000
			c0 := cpuNow()
			for i := 0; i < n; i++ {
				a := call(f.c, s, c.tool, json.RawMessage(c.args))
				if a.Err != "" {
					t.Fatal(a.Err)
				}
			}
			t.Logf("%s %s: %.1f cpu-µs/call", c.tool, c.args, float64((cpuNow()-c0).Microseconds())/float64(n))
		}
	}
}
