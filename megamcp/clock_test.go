package megamcp

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/weft-dev/weft/megamcp/megamcptest"
)

// TestClockRange: the virtual clock takes every time tools can read (Unix
// nanoseconds, 1970 to 2262), up to the nanosecond at both ends, and refuses one outside that
// range (or a missing one) with a 400 naming the range, the clock and the
// ledger unchanged, before and after a restart. Before, 9999-12-31 was
// acknowledged and tools read 2400-10-18 (a wrapped time), and
// 0001-01-01 was refused as "needs a time".
func TestClockRange(t *testing.T) {
	reg := megamcptest.Registry(t)
	ctx := context.Background()
	dir := t.TempDir()
	s := newServer(t, dir, reg)
	h, err := s.Handler(ctx, HTTPOptions{Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	defer ts.Close()
	a := newAPI(t, ts)
	id := a.create(map[string]any{"modules": []string{"hello"}}).ID

	// Both ends are representable: tools read exactly them.
	for _, tm := range []string{"2262-04-11T23:47:16.854775807Z", "1970-01-01T00:00:00Z"} {
		r := a.do("POST", "/v1/sessions/"+id+"/clock", `{"time":"`+tm+`"}`)
		r.json(t, 200, nil)
		if string(r.body) != `{"clock":"`+tm+`"}`+"\n" {
			t.Fatalf("clock %s: %s", tm, r.body)
		}
		jsonEq(t, a.call(id, "now", nil).Result.StructuredContent, `{"now":"`+tm+`"}`)
	}
	a.do("POST", "/v1/sessions/"+id+"/clock", `{"time":"2030-01-02T03:04:05Z"}`).json(t, 200, nil)
	a.call(id, "add_note", map[string]string{"text": "kept"})
	before := a.session(id)
	recsBefore, _ := a.ledger(id, "")

	const rng = "1970-01-01T00:00:00Z to 2262-04-11T23:47:16.854775807Z (tools read it as nanoseconds since 1970 in 63 bits)"
	for _, c := range []struct{ body, msg string }{
		{`{"time":"9999-12-31T23:59:59Z"}`, "bad request: clock 9999-12-31T23:59:59Z is outside the virtual clock's range, " + rng},
		{`{"time":"2262-04-11T23:47:16.854775808Z"}`, "bad request: clock 2262-04-11T23:47:16.854775808Z is outside the virtual clock's range, " + rng},
		{`{"time":"1677-09-20T00:00:00Z"}`, "bad request: clock 1677-09-20T00:00:00Z is outside the virtual clock's range, " + rng},
		{`{"time":"1969-12-31T23:59:59.999999999Z"}`, "bad request: clock 1969-12-31T23:59:59.999999999Z is outside the virtual clock's range, " + rng},
		{`{"time":"0001-01-01T00:00:00Z"}`, "bad request: clock 0001-01-01T00:00:00Z is outside the virtual clock's range, " + rng},
		{`{}`, "bad request: clock needs a time (RFC 3339)"},
		{`{"time":null}`, "bad request: clock needs a time (RFC 3339)"},
	} {
		e := a.do("POST", "/v1/sessions/"+id+"/clock", c.body).apiErr(t, 400, "bad_request")
		if e.Error.Message != c.msg {
			t.Fatalf("clock %s: %q, want %q", c.body, e.Error.Message, c.msg)
		}
	}
	// A session created with an unrepresentable clock is refused too, and
	// none is made.
	e := a.do("POST", "/v1/sessions", `{"modules":["hello"],"clock":"9999-12-31T23:59:59Z"}`).apiErr(t, 400, "bad_request")
	if e.Error.Message != "bad request: clock 9999-12-31T23:59:59Z is outside the virtual clock's range, "+rng {
		t.Fatalf("create: %q", e.Error.Message)
	}
	if n := len(s.Sessions()); n != 1 {
		t.Fatalf("%d sessions after the refused create, want 1", n)
	}

	// Nothing changed: the clock, the ledger, the state.
	check := func(when string, a *api) {
		t.Helper()
		got := a.session(id)
		recs, _ := a.ledger(id, "")
		if !got.Clock.Equal(before.Clock) || got.Ledger != before.Ledger || got.Hash != before.Hash || len(recs) != len(recsBefore) {
			t.Fatalf("%s: session %+v with %d records, want %+v with %d", when, got.SessionInfo, len(recs), before.SessionInfo, len(recsBefore))
		}
		if !got.Clock.Equal(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)) {
			t.Fatalf("%s: clock %v", when, got.Clock)
		}
	}
	check("after the refusals", a)
	jsonEq(t, a.call(id, "now", nil).Result.StructuredContent, `{"now":"2030-01-02T03:04:05Z"}`)
	before, recsBefore = a.session(id), append(recsBefore, Record{}) // the ledger records "now" too

	// The same after a crash and recovery.
	Abandon(s)
	ts.Close()
	s2 := newServer(t, dir, reg)
	defer s2.Close()
	h2, err := s2.Handler(ctx, HTTPOptions{Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	ts2 := httptest.NewServer(h2)
	defer ts2.Close()
	check("after recovery", newAPI(t, ts2))
}
