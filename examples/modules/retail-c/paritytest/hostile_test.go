package paritytest

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/weft-dev/weft/core/module"
)

// TestHostileArguments: wrong types, missing and extra keys, huge strings,
// invalid UTF-8, deep nesting and absurd values, through Module.Call (the
// host's schema check, then the module), get exactly the Go module's
// answers, and leave the state as it was (a tool error rolls the call back).
func TestHostileArguments(t *testing.T) {
	f := setup(t)
	// 16 KiB: far over every VARCHAR. Longer keys make the host's SQL slow
	// (a 1 MiB key ran past the 2 s call deadline for both modules, a
	// 64 KiB one under -race), so the sessions below get a generous
	// timeout: the test is about answers, not the host's speed.
	huge := strings.Repeat("W", 16<<10)
	deep := strings.Repeat("[", 5000) + strings.Repeat("]", 5000)
	cases := []struct{ tool, args string }{
		{"get_order_details", `{"order_id":5}`},
		{"get_order_details", `{"order_id":null}`},
		{"get_order_details", `{}`},
		{"get_order_details", `{"order_id":"#W2417020","extra":1}`},
		{"get_order_details", `{"ORDER_ID":"#W2417020"}`},
		{"get_order_details", `{"order_id":"` + huge + `"}`},
		{"get_order_details", "{\"order_id\":\"#W2417020\xff\"}"},
		{"get_order_details", `{"order_id":"#w2417020"}`},
		{"get_order_details", `{"order_id":"#W2417020 "}`},
		{"get_order_details", `{"order_id":` + deep + `}`},
		{"get_order_details", `[]`},
		{"get_order_details", `{"order_id":"\u0000"}`},
		{"get_user_details", `{"user_id":"\ud800"}`},
		{"get_user_details", `{"user_id":"YUSUF_ROSSI_9620"}`},
		{"get_product_details", `{"product_id":["6992792935"]}`},
		{"get_item_details", `{"item_id":"` + huge + `"}`},
		{"find_user_id_by_email", `{"email":"YUSUF.ROSSI7301@EXAMPLE.COM"}`},
		{"find_user_id_by_email", "{\"email\":\"\xc3\x28@example.com\"}"},
		{"find_user_id_by_name_zip", `{"first_name":"yusuf","last_name":"ROSSI","zip":"19122"}`},
		{"find_user_id_by_name_zip", `{"first_name":"Yusuf","last_name":"Rossi"}`},
		{"list_all_product_types", `{"x":1}`},
		{"transfer_to_human_agents", `{"summary":` + deep + `}`},
		{"cancel_pending_order", `{"order_id":"#W4776164","reason":"because"}`},
		{"cancel_pending_order", `{"order_id":"#W4776164","reason":7}`},
		{"cancel_pending_order", `{"order_id":"` + huge + `","reason":"no longer needed"}`},
		{"modify_pending_order_items", `{"order_id":"#W4776164","item_ids":["8349118980","8349118980"],"new_item_ids":["9647292434"],"payment_method_id":"credit_card_9513926"}`},
		{"modify_pending_order_items", `{"order_id":"#W4776164","item_ids":"8349118980","new_item_ids":["9647292434"],"payment_method_id":"credit_card_9513926"}`},
		// one bad member only: with two, which one the host's schema check
		// names varies from call to call (the same schema, the same input)
		{"modify_pending_order_items", `{"order_id":"#W4776164","item_ids":[1],"new_item_ids":["9647292434"],"payment_method_id":"credit_card_9513926"}`},
		{"modify_pending_order_payment", `{"order_id":"#W4776164","payment_method_id":"gift_card_0000000"}`},
		{"modify_user_address", `{"user_id":"yusuf_rossi_9620","address1":"` + huge + `","address2":"","city":"x","state":"y","country":"z","zip":"1"}`},
		{"return_delivered_order_items", `{"order_id":"#W2378156","item_ids":[],"payment_method_id":"credit_card_9513926"}`},
		{"exchange_delivered_order_items", `{"order_id":"#W2378156","item_ids":["4202497723"],"new_item_ids":["4202497723"],"payment_method_id":"paypal_0"}`},
		{"calculate", `{"expression":"1/0"}`},
		{"calculate", `{"expression":"` + strings.Repeat("(", 3000) + "1" + strings.Repeat(")", 3000) + `"}`},
		{"calculate", `{"expression":"2**3"}`},
	}
	seedHash := f.store.Fork(f.seed).Hash()
	refused := 0
	for _, tc := range cases {
		sc, sg := f.session(), f.session()
		sc.Timeout, sg.Timeout = 2*time.Minute, 2*time.Minute
		got, want := call(f.c, sc, tc.tool, json.RawMessage(tc.args)), call(f.gomod, sg, tc.tool, json.RawMessage(tc.args))
		name := tc.tool + " " + short(tc.args)
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s: C differs from Go (-go +c):\n%s", name, d)
		}
		if got.IsError || got.Err != "" {
			refused++
			if h := sc.Workspace.Hash(); h != seedHash {
				t.Errorf("%s: refused, but the state changed", name)
			}
		}
	}
	if refused < len(cases)-8 {
		t.Errorf("only %d of %d hostile calls refused", refused, len(cases))
	}
}

// shown by the loop above: most of them are refused (the few that are not
// are valid calls by the Go module's rules: an empty return list, 2**3).

func short(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}

// TestDeterminism: the same state and arguments give the same bytes: one
// oracle case's calls twice on fresh forks with the pooled instances, and
// once more on a module compiled in a new runtime; the final states equal.
func TestDeterminism(t *testing.T) {
	f := setup(t)
	o := readOracle(t, "tasks-train.json")
	rt2, err := module.NewRuntime(context.Background(), module.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer rt2.Close(context.Background())
	c2, err := rt2.Compile(context.Background(), f.cWasm)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range o.Cases[:8] {
		var hashes []any
		var runs [][]answer
		for _, m := range []*module.Module{f.c, f.c, c2} {
			s := f.session()
			var as []answer
			for _, cl := range c.Calls {
				as = append(as, call(m, s, cl.Name, cl.Arguments))
			}
			runs = append(runs, as)
			hashes = append(hashes, s.Workspace.Hash())
		}
		for i := 1; i < len(runs); i++ {
			if d := cmp.Diff(runs[0], runs[i]); d != "" {
				t.Errorf("%s: run %d differs from run 0:\n%s", c.ID, i, d)
			}
			if hashes[i] != hashes[0] {
				t.Errorf("%s: run %d ends in another state", c.ID, i)
			}
		}
	}
}

var update = flag.Bool("update", false, "rewrite manifest.inc from the Go module's manifest")

// TestManifest: the C module's manifest is the Go module's byte for byte
// but for its name ("retail-c"): the same tools, descriptions, input
// schemas, tables, hosts and export flag. -update rewrites manifest.inc.
func TestManifest(t *testing.T) {
	f := setup(t)
	goM := f.gomod.ManifestJSON()
	want := bytes.Replace(goM, []byte(`"name":"retail",`), []byte(`"name":"retail-c",`), 1)
	if bytes.Equal(want, goM) {
		t.Fatalf("the Go manifest has no \"name\":\"retail\": %.80s", goM)
	}
	if *update {
		var b strings.Builder
		b.WriteString("/* Generated by TestManifest (go test ./examples/modules/retail-c/paritytest -run TestManifest -update):\n")
		b.WriteString(" * the Go retail module's manifest (tool.ManifestJSON), renamed \"retail-c\". Do not edit. */\n")
		for s := string(want); s != ""; {
			n := min(100, len(s))
			line := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s[:n])
			b.WriteString(`"` + line + "\"\n")
			s = s[n:]
		}
		if err := os.WriteFile(filepath.Join(cDir, "manifest.inc"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Log("manifest.inc rewritten: rebuild the module")
		return
	}
	if got := f.c.ManifestJSON(); !bytes.Equal(got, want) {
		t.Errorf("C manifest differs from the Go module's (go test -run TestManifest -update, then make):\n%s", cmp.Diff(string(want), string(got)))
	}
	if n := len(f.c.Manifest().Tools); n != 16 {
		t.Errorf("%d tools, want 16", n)
	}
}
