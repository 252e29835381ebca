package interp_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/weft-dev/weft/sdk/abi"
	"github.com/weft-dev/weft/sdk/interp"
	"github.com/weft-dev/weft/sdk/spec"
)

// A program sent compiled by the host (interp.Compile, no source) answers
// exactly as its source does, keeps the source's positions in backtraces,
// and is cached under its digest; an undecodable compiled form without the
// source is program_missing (the host resends the source), with the source
// it falls back to compiling it.
func TestCompiledProgram(t *testing.T) {
	compiled, err := interp.Compile(program)
	if err != nil {
		t.Fatal(err)
	}
	digest := spec.ProgramDigest(program, []string{"not_found"})
	req := func(tool, args string, p abi.Program) []byte {
		p.Digest, p.Errors = digest, []string{"not_found"}
		b, _ := json.Marshal(abi.CallRequest{Tool: tool, Arguments: json.RawMessage(args), Program: &p})
		return b
	}
	ctx := context.Background()
	for _, tc := range []struct{ tool, args string }{
		{"get_user", `{"user_id":"u1"}`},
		{"get_user", `{"user_id":"u9"}`},
		{"list_users", `{}`},
		{"stamp", `{}`},
		{"broken", `{}`},
		{"bad_sql", `{}`},
	} {
		src := interp.New(interp.Options{MaxSteps: 100_000})
		cmp := interp.New(interp.Options{MaxSteps: 100_000})
		want := string(src.Dispatch(ctx, &fakeHost{sql: users}, req(tc.tool, tc.args, abi.Program{Source: program})))
		got := string(cmp.Dispatch(ctx, &fakeHost{sql: users}, req(tc.tool, tc.args, abi.Program{Compiled: compiled})))
		if got != want {
			t.Errorf("%s %s compiled:\n got %s\nwant %s", tc.tool, tc.args, got, want)
		}
		if !cmp.Has(digest) {
			t.Errorf("%s: compiled program not cached", tc.tool)
		}
		again := string(cmp.Dispatch(ctx, &fakeHost{sql: users}, req(tc.tool, tc.args, abi.Program{})))
		if again != want {
			t.Errorf("%s by digest after compiled:\n got %s\nwant %s", tc.tool, again, want)
		}
	}

	damaged := append([]byte{}, compiled...)
	damaged[0] ^= 0xff
	in := interp.New(interp.Options{MaxSteps: 100_000})
	var ie abi.InternalError
	if err := json.Unmarshal(in.Dispatch(ctx, &fakeHost{sql: users}, req("list_users", `{}`, abi.Program{Compiled: damaged})), &ie); err != nil || ie.Code != abi.InternalProgramMissing {
		t.Fatalf("damaged compiled form: %+v %v, want code %s", ie, err, abi.InternalProgramMissing)
	}
	if in.Has(digest) {
		t.Fatal("a damaged compiled form was cached")
	}
	truncated := compiled[:len(compiled)/2]
	got := string(in.Dispatch(ctx, &fakeHost{sql: users}, req("list_users", `{}`, abi.Program{Compiled: truncated, Source: program})))
	if want := `{"content":[{"type":"text","text":"[\"u1\",\"u2\"]"}]}`; got != want {
		t.Errorf("truncated compiled form with source:\n got %s\nwant %s", got, want)
	}
	if _, err := interp.Compile("def f(:\n"); err == nil {
		t.Error("Compile of a syntax error: no error")
	}
}
