package synth

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func airlineDocs(t testing.TB) *Docs {
	t.Helper()
	ds, err := LoadDocs(filepath.Join(airlineDir, "tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	return &ds[0]
}

// TestDeterministicAirlinePlan pins what the synthesizer infers from tau2
// airline's tools.json: entities, keys, foreign keys, operations.
func TestDeterministicAirlinePlan(t *testing.T) {
	p, err := (&Deterministic{}).Plan(airlineDocs(t))
	if err != nil {
		t.Fatal(err)
	}
	var ents []string
	for _, e := range p.Entities {
		s := e.Name + "(" + e.Key + ":" + e.KeyType
		for _, c := range e.Columns {
			s += " " + c.Name + ":" + c.Type
			if c.Ref != "" {
				s += "->" + c.Ref
			}
		}
		ents = append(ents, s+")")
	}
	want := []string{
		"airport(airport_id:string)",
		"user(user_id:string)",
		"certificate(certificate_id:string user_id:string->user amount:integer)",
		"flight(flight_number:string date:string origin:string destination:string)",
		"human(human_id:string summary:string)",
		"record(record_id:string expression:string)",
		"reservation(reservation_id:string user_id:string->user origin:string destination:string flight_type:string cabin:string flights:json passengers:json payment_methods:json total_baggages:integer nonfree_baggages:integer insurance:string status:string updated_at:string payment_id:string)",
	}
	if d := cmp.Diff(want, ents); d != "" {
		t.Errorf("entities (-want +got):\n%s", d)
	}
	var ops []string
	for _, tp := range p.Tools {
		ops = append(ops, tp.Name+" "+string(tp.Op)+" "+tp.Entity.Name)
	}
	wantOps := []string{
		"book_reservation create reservation", "calculate list record", "cancel_reservation status reservation",
		"get_flight_status get flight", "get_reservation_details get reservation", "get_user_details get user",
		"list_all_airports list airport", "search_direct_flight list flight", "search_onestop_flight list flight",
		"send_certificate create certificate", "transfer_to_human_agents create human",
		"update_reservation_baggages update reservation", "update_reservation_flights update reservation",
		"update_reservation_passengers update reservation",
	}
	if d := cmp.Diff(wantOps, ops); d != "" {
		t.Errorf("operations (-want +got):\n%s", d)
	}
}

// TestDeterministicAirlineCalls runs the synthesized airline server: reads
// by key, not_found, a create with a foreign key, a refused create that
// leaves the state as it was, a status change read back.
func TestDeterministicAirlineCalls(t *testing.T) {
	srv, err := (&Deterministic{Seed: 7}).Synthesize(context.Background(), &Request{Docs: *airlineDocs(t)})
	if err != nil {
		t.Fatal(err)
	}
	s := detServe(t, srv)
	sess := s.session()
	out, isErr := detCall(t, s, sess, "get_user_details", `{"user_id":"user_1"}`)
	if isErr || !cmp.Equal(out, map[string]any{"user_id": "user_1"}) {
		t.Fatalf("get_user_details user_1: %v %v", out, isErr)
	}
	out, isErr = detCall(t, s, sess, "get_user_details", `{"user_id":"nobody"}`)
	if !isErr || out["text"] != "user nobody not found" {
		t.Fatalf("unknown user: %v %v", out, isErr)
	}
	before := sess.Workspace.Hash()
	book := `{"user_id":%q,"origin":"SFO","destination":"JFK","flight_type":"one_way","cabin":"economy","flights":[{"flight_number":"HAT001","date":"2024-05-20"}],"passengers":[],"payment_methods":[],"total_baggages":1,"nonfree_baggages":0,"insurance":"no"}`
	out, isErr = detCall(t, s, sess, "book_reservation", strings.Replace(book, "%q", `"ghost"`, 1))
	if !isErr || out["text"] != "user ghost not found" {
		t.Fatalf("book for an unknown user: %v %v", out, isErr)
	}
	if sess.Workspace.Hash() != before {
		t.Fatal("a refused create changed the state")
	}
	out, isErr = detCall(t, s, sess, "book_reservation", strings.Replace(book, "%q", `"user_2"`, 1))
	want := map[string]any{"reservation_id": "reservation_6", "user_id": "user_2", "origin": "SFO", "destination": "JFK",
		"flight_type": "one_way", "cabin": "economy", "flights": []any{map[string]any{"flight_number": "HAT001", "date": "2024-05-20"}},
		"passengers": []any{}, "payment_methods": []any{}, "total_baggages": 1.0, "nonfree_baggages": 0.0, "insurance": "no",
		"status": "active", "updated_at": nil, "payment_id": nil}
	if d := cmp.Diff(want, out); isErr || d != "" {
		t.Fatalf("book_reservation (error %v) (-want +got):\n%s", isErr, d)
	}
	if _, isErr = detCall(t, s, sess, "cancel_reservation", `{"reservation_id":"reservation_6"}`); isErr {
		t.Fatal("cancel failed")
	}
	out, _ = detCall(t, s, sess, "get_reservation_details", `{"reservation_id":"reservation_6"}`)
	if out["status"] != "cancelled" || out["updated_at"] == nil {
		t.Fatalf("after cancel: status %v, updated_at %v", out["status"], out["updated_at"])
	}
	out, _ = detCall(t, s, sess, "search_direct_flight", `{"origin":"nowhere","destination":"JFK","date":"2024-05-20"}`)
	if !cmp.Equal(out, map[string]any{"results": []any{}, "count": 0.0}) {
		t.Fatalf("search: %v", out)
	}
	// Missing and unexpected arguments are refused before the program runs.
	if _, isErr = detCall(t, s, sess, "get_user_details", `{}`); !isErr {
		t.Fatal("missing argument accepted")
	}
	if _, isErr = detCall(t, s, sess, "get_user_details", `{"user_id":"user_1","x":1}`); !isErr {
		t.Fatal("unexpected argument accepted")
	}
}

// TestDeterministicIsDeterministic: the same docs and seed give the same
// server byte for byte; another seed changes the seed rows only.
func TestDeterministicIsDeterministic(t *testing.T) {
	d := airlineDocs(t)
	enc := func(seed uint64) *struct{ all, seed, prog string } {
		srv, err := (&Deterministic{Seed: seed}).Synthesize(context.Background(), &Request{Docs: *d})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(srv)
		return &struct{ all, seed, prog string }{string(b), string(srv.Seed), srv.Program + srv.Schema}
	}
	a, b, c := enc(1), enc(1), enc(2)
	if a.all != b.all {
		t.Fatal("two syntheses with seed 1 differ")
	}
	if a.seed == c.seed || a.prog != c.prog {
		t.Fatal("seed 2 should change the seed rows and nothing else")
	}
}

// TestDeterministicBFCLClasses: each of the 8 BFCL classes synthesizes
// into a server that validates, is served and whose seed loads.
func TestDeterministicBFCLClasses(t *testing.T) {
	for class, file := range BFCLClassFiles {
		ds, err := LoadDocs(filepath.Join(bfclDir, "func_docs", file))
		if err != nil {
			t.Fatal(err)
		}
		srv, err := (&Deterministic{}).Synthesize(context.Background(), &Request{Docs: ds[0]})
		if err != nil {
			t.Fatalf("%s: %v", class, err)
		}
		detServe(t, srv)
		if len(srv.Tools) != len(ds[0].Tools) {
			t.Errorf("%s: %d tools of %d", class, len(srv.Tools), len(ds[0].Tools))
		}
	}
}

// TestDeterministicOddNames: documented names that are not Starlark
// identifiers, keywords as parameters, and a tool named like a builtin.
func TestDeterministicOddNames(t *testing.T) {
	docs := Docs{Name: "0042.@odd/server", Tools: []DocTool{
		{Name: "list-items", Description: "List items", InputSchema: json.RawMessage(`{"type":"object","properties":{"from":{"type":"string"},"max-results":{"type":"integer"}}}`)},
		{Name: "query", Description: "Query items", InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}}}`)},
		{Name: "create_item", Description: "", InputSchema: json.RawMessage(`{"type":"object","properties":{"from":{"type":"string"},"enabled":{"type":"boolean"}}}`)},
	}}
	srv, err := (&Deterministic{Rows: 2}).Synthesize(context.Background(), &Request{Docs: docs})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range srv.Tools {
		names = append(names, tl.Name)
	}
	if d := cmp.Diff([]string{"list_items", "query_", "create_item"}, names); d != "" || srv.Name != "mcp-0042._odd_server" {
		t.Fatalf("names %s (-want +got):\n%s", srv.Name, d)
	}
	if srv.Tools[2].Description != "(undocumented) create_item" {
		t.Errorf("description %q", srv.Tools[2].Description)
	}
	s := detServe(t, srv)
	sess := s.session()
	out, isErr := detCall(t, s, sess, "create_item", `{"from":"x","enabled":true}`)
	if isErr || out["from"] != "x" || out["enabled"] != true || out["item_id"] != "item_3" {
		t.Fatalf("create_item: %v %v", out, isErr)
	}
	out, isErr = detCall(t, s, sess, "list_items", `{"from":"x","max-results":5}`)
	if isErr || out["count"] != 1.0 {
		t.Fatalf("list_items: %v %v", out, isErr)
	}
	// "query" names no entity: it lists the default table ("record", two
	// seed rows), which has no text column for the query to search.
	out, isErr = detCall(t, s, sess, "query_", `{"query":"zzz"}`)
	if isErr || out["count"] != 2.0 {
		t.Fatalf("query_: %v %v", out, isErr)
	}
}

func TestDeterministicRefusesEmptyDocs(t *testing.T) {
	_, err := (&Deterministic{}).Synthesize(context.Background(), &Request{Docs: Docs{Name: "none", Source: "x.json"}})
	if err == nil || err.Error() != `docs x.json, server "none", field tools: no tools documented` {
		t.Fatalf("got %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (&Deterministic{}).Synthesize(ctx, &Request{Docs: *airlineDocs(t)}); err != context.Canceled {
		t.Fatalf("cancelled context: %v", err)
	}
}

// TestStateSeedAirline: tau2's db.json loads into the inferred schema by
// collection and column names.
func TestStateSeedAirline(t *testing.T) {
	p, err := (&Deterministic{}).Plan(airlineDocs(t))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(airlineDir, "db.json"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := decodeState(raw)
	if err != nil {
		t.Fatal(err)
	}
	seed, load := p.StateSeed(st)
	if d := cmp.Diff(map[string]int{"flight": 300, "user": 500, "reservation": 2000}, load.Rows); d != "" || load.Dropped != 0 {
		t.Fatalf("rows (-want +got):\n%s\ndropped %d", d, load.Dropped)
	}
	var rows map[string][]map[string]any
	if err := json.Unmarshal(seed, &rows); err != nil {
		t.Fatal(err)
	}
	var r0 map[string]any
	for _, r := range rows["reservation"] {
		if r["reservation_id"] == "4WQ150" {
			r0 = r
		}
	}
	if r0 == nil || r0["user_id"] != "chen_jackson_3290" || r0["cabin"] != "business" {
		t.Fatalf("reservation 4WQ150: %v", r0)
	}
}
