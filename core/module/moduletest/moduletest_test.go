package moduletest

import (
	"encoding/json"
	"strings"
	"testing"
)

func mustDecode(t *testing.T, s string) any {
	t.Helper()
	v, err := decode([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestEqual(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		{`12.0`, `12`, true},
		{`0.1`, `0.1000000000001`, true},
		{`0.1`, `0.1001`, false},
		{`1e20`, `100000000000000000000`, true},
		{`{"a": [1, 2.0, "x"], "b": null}`, `{"b": null, "a": [1.0, 2, "x"]}`, true},
		{`{"a": 1}`, `{"a": 1, "b": 2}`, false},
		{`[1, 2]`, `[2, 1]`, false},
		{`"12"`, `12`, false},
		{`null`, `{}`, false},
		{`true`, `true`, true},
	}
	for _, c := range cases {
		if got := Equal(mustDecode(t, c.a), mustDecode(t, c.b)); got != c.want {
			t.Errorf("Equal(%s, %s) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestOutputValue(t *testing.T) {
	if v := outputValue(`Transfer successful`); v != "Transfer successful" {
		t.Errorf("plain text: %#v", v)
	}
	if v := outputValue(`{"id": 1}`); !Equal(v, mustDecode(t, `{"id": 1.0}`)) {
		t.Errorf("json text: %#v", v)
	}
	if v := outputValue(`1 2`); v != "1 2" {
		t.Errorf("two values are text: %#v", v)
	}
}

// raw is the snapshot of an export given as collection -> JSON text.
func raw(m map[string]string) snapshot {
	out := map[string]json.RawMessage{}
	for k, v := range m {
		out[k] = json.RawMessage(v)
	}
	return snapshotOf(out)
}

func TestCompareFinal(t *testing.T) {
	base := raw(map[string]string{
		"orders": `{"#1": {"status": "pending", "total": 10}, "#2": {"status": "delivered", "total": 5}}`,
		"users":  `{"u1": {"name": "ann"}}`,
	})
	final := raw(map[string]string{
		"orders": `{"#1": {"status": "cancelled", "total": 10.0}, "#2": {"status": "delivered", "total": 5}}`,
		"users":  `{"u1": {"name": "ann"}}`,
	})
	ok := Case{ID: "c", FinalChanges: map[string]map[string]json.RawMessage{
		"orders": {"#1": json.RawMessage(`{"status": "cancelled", "total": 10}`)},
	}}
	if ms := compareFinal(ok, base, final); len(ms) != 0 {
		t.Fatalf("expected match, got %v", ms)
	}
	// Null-valued keys equal absent ones in records.
	nulls := Case{ID: "c", FinalChanges: map[string]map[string]json.RawMessage{
		"orders": {"#1": json.RawMessage(`{"status": "cancelled", "total": 10, "cancel_reason": null}`)},
	}}
	if ms := compareFinal(nulls, base, final); len(ms) != 0 {
		t.Fatalf("null key vs absent key: %v", ms)
	}
	// A change the case does not list.
	missing := Case{ID: "c"}
	ms := compareFinal(missing, base, final)
	if len(ms) != 1 || !strings.Contains(ms[0].Want, "orders[#1] unchanged") {
		t.Fatalf("unlisted change: %v", ms)
	}
	// A listed change with the wrong record.
	wrong := Case{ID: "c", FinalChanges: map[string]map[string]json.RawMessage{
		"orders": {"#1": json.RawMessage(`{"status": "pending", "total": 10}`)},
	}}
	if ms := compareFinal(wrong, base, final); len(ms) != 1 || ms[0].What != "final_changes" {
		t.Fatalf("wrong record: %v", ms)
	}
	// A listed change that did not happen.
	phantom := Case{ID: "c", FinalChanges: map[string]map[string]json.RawMessage{
		"orders": {"#1": json.RawMessage(`{"status": "cancelled", "total": 10}`), "#2": json.RawMessage(`{"status": "returned", "total": 5}`)},
	}}
	if ms := compareFinal(phantom, base, final); len(ms) != 1 || !strings.Contains(ms[0].Want, "#2") {
		t.Fatalf("phantom change: %v", ms)
	}
}

func TestReadRejectsBadFiles(t *testing.T) {
	if _, err := Read(strings.NewReader(`{"cases": [{"calls": []}]}`)); err == nil || !strings.Contains(err.Error(), "no id") {
		t.Fatalf("case without id: %v", err)
	}
	if _, err := Read(strings.NewReader(`{"kases": []}`)); err == nil || !strings.Contains(err.Error(), "no cases") {
		t.Fatalf("file without cases: %v", err)
	}
	if _, err := Read(strings.NewReader(`{"cases": [`)); err == nil {
		t.Fatal("truncated file accepted")
	}
	f, err := Read(strings.NewReader(`{"source": "s", "cases": [{"id": "a", "calls": [{"name": "t", "arguments": {"x": 1.5}, "error": false, "output": 3}]}]}`))
	if err != nil || len(f.Cases) != 1 || f.Cases[0].Calls[0].Name != "t" || string(f.Cases[0].Calls[0].Output) != "3" {
		t.Fatalf("read: %+v %v", f, err)
	}
}

func TestCompareFinalNonRecordCollection(t *testing.T) {
	base := raw(map[string]string{"notes": `[{"id": 1}]`})
	final := raw(map[string]string{"notes": `[{"id": 1}, {"id": 2}]`})
	listed := Case{ID: "c", FinalChanges: map[string]map[string]json.RawMessage{"notes": {"2": json.RawMessage(`{"id": 2}`)}}}
	if ms := compareFinal(listed, base, final); len(ms) != 1 || !strings.Contains(ms[0].Want, "object of records") {
		t.Fatalf("a list-shaped collection cannot be checked against final_changes: %v", ms)
	}
	if ms := compareFinal(Case{ID: "c"}, base, final); len(ms) != 1 || !strings.Contains(ms[0].Got, `"id":2`) {
		t.Fatalf("changed list: %v", ms)
	}
	if ms := compareFinal(Case{ID: "c"}, base, base); len(ms) != 0 {
		t.Fatalf("unchanged list: %v", ms)
	}
}

// TestOverlay: an export of changed records laid over the base replaces
// the records it lists, removes those it gives as null, adds new ones and
// leaves the rest (and other collections) as they were.
func TestOverlay(t *testing.T) {
	base := raw(map[string]string{
		"orders": `{"#1": {"s": "pending"}, "#2": {"s": "delivered"}, "#3": {"s": "x"}}`,
		"users":  `{"u1": {"name": "ann"}}`,
	})
	got := base.overlay(map[string]map[string]json.RawMessage{
		"orders": {"#1": json.RawMessage(`{"s": "cancelled"}`), "#3": json.RawMessage(`null`), "#4": json.RawMessage(`{"s": "new"}`)},
	})
	want := map[string]map[string]string{
		"orders": {"#1": `{"s": "cancelled"}`, "#2": `{"s": "delivered"}`, "#4": `{"s": "new"}`},
		"users":  {"u1": `{"name": "ann"}`},
	}
	if len(got) != len(want) {
		t.Fatalf("collections %v", got)
	}
	for coll, recs := range want {
		if len(got[coll].recs) != len(recs) {
			t.Errorf("%s: %d records, want %d", coll, len(got[coll].recs), len(recs))
		}
		for k, v := range recs {
			if string(got[coll].recs[k]) != v {
				t.Errorf("%s[%s] = %s, want %s", coll, k, got[coll].recs[k], v)
			}
		}
	}
	if len(base["orders"].recs) != 3 || string(base["orders"].recs["#1"]) != `{"s": "pending"}` {
		t.Errorf("overlay changed the base: %v", base["orders"].recs)
	}
	// Compared with the case: #1 changed and #3 removed as listed, #4
	// added but not listed.
	c := Case{ID: "c", FinalChanges: map[string]map[string]json.RawMessage{
		"orders": {"#1": json.RawMessage(`{"s": "cancelled"}`), "#3": json.RawMessage(`null`)},
	}}
	ms := compareFinal(c, base, got)
	if len(ms) != 1 || ms[0].Want != "orders[#4] unchanged" || ms[0].Got != `{"s":"new"}` {
		t.Fatalf("mismatches %v", ms)
	}
}
