package tau2retail_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	tau2retail "github.com/weft-dev/weft/examples/servers/tau2-retail"
)

// TestCommittedSeed fails when seed.json is not what Convert makes of
// db.json today (run `make tau2-retail-seed`).
func TestCommittedSeed(t *testing.T) {
	db, err := os.ReadFile("../../data/tau2-retail/db.json")
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := tau2retail.Convert(bytes.NewReader(db), &want); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("seed.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("seed.json is stale (%d bytes, the converter gives %d): run `make tau2-retail-seed`", len(got), want.Len())
	}
}

// TestConvertRefusesBadRecords: a record missing a field the schema needs,
// or carrying one it does not know, is an error naming the record and the
// field; nothing is written.
func TestConvertRefusesBadRecords(t *testing.T) {
	for _, c := range []struct{ db, want string }{
		{`{"users": {"u1": {"user_id": "u1", "name": {"first_name": "A"}, "address": {}, "email": "e", "payment_methods": {}, "orders": []}}, "orders": {}, "products": {}}`,
			"users[u1]: no name.last_name"},
		{`{"users": {}, "orders": {"#W1": {"order_id": "#W1", "user_id": "u1", "status": "pending", "items": [], "fulfillments": [], "payment_history": []}}, "products": {}}`,
			"orders[#W1]: want address"},
		{`{"users": {}, "orders": {}, "products": {"p1": {"name": "P", "product_id": "p1", "variants": {"i1": {"item_id": "i1", "options": {}, "available": true}}}}}`,
			"products[p1].variants[i1]: want item_id, options, available and price"},
		{`{"users": {}, "orders": {}, "products": {"p1": {"name": "P", "product_id": "p1", "variants": {}, "colour": "red"}}}`,
			`products[p1]: json: unknown field "colour"`},
		{`{"users": [], "orders": {}, "products": {}}`, "users: not a JSON object"},
		{`not json`, "db.json:"},
	} {
		var out bytes.Buffer
		err := tau2retail.Convert(strings.NewReader(c.db), &out)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Convert(%.60s...) = %v, want an error containing %q", c.db, err, c.want)
		}
		if out.Len() != 0 {
			t.Errorf("Convert(%.60s...) wrote %d bytes on error", c.db, out.Len())
		}
	}
}
