package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

const (
	dbPath     = "../../../data/tau2-airline/db.json"
	schemaPath = "../schema.sql"
	seedPath   = "../seed.json"
)

// TestCommittedSeed checks that the committed seed.json is what the
// converter makes of db.json and schema.sql now (`make airline-seed`
// rewrites it).
func TestCommittedSeed(t *testing.T) {
	db, err := os.ReadFile(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	ddl, err := os.ReadFile(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Seed(context.Background(), db, string(ddl), &buf); err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile(seedPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), committed) {
		t.Fatal("examples/servers/tau2-airline/seed.json is stale: run make airline-seed")
	}
}

// TestRowsCounts checks the conversion's row counts against db.json's
// record counts (300 flights, 9,000 flight dates, 500 users, 2,000
// reservations, the 20 airports).
func TestRowsCounts(t *testing.T) {
	db, err := os.ReadFile(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := Rows(db)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"airports": 20, "flights": 300, "flight_dates": 9000, "users": 500, "payment_methods": 1486, "reservations": 2000}
	for table, n := range want {
		if got := len(rows[table]); got != n {
			t.Errorf("%s: %d rows, want %d", table, got, n)
		}
	}
	if len(rows) != len(want) {
		t.Errorf("tables %d, want %d", len(rows), len(want))
	}
	// The first flight date of HAT001 is landed: status and times only.
	fd := rows["flight_dates"][0]
	if fd["flight_number"] != "HAT001" || fd["date"] != "2024-05-01" || fd["status"] != "landed" ||
		fd["actual_departure_time_est"] != "2024-05-01T06:26:00" || fd["seats_economy"] != nil {
		t.Errorf("first flight date %v", fd)
	}
}

// TestRowsErrors: a db.json of the wrong shape is refused naming the record.
func TestRowsErrors(t *testing.T) {
	for _, tc := range []struct{ name, db, want string }{
		{"not an object", `[]`, "db.json: not a JSON object"},
		{"no users", `{"flights": {}, "reservations": {}}`, `no "users" object`},
		{"unknown status", `{"flights": {"F1": {"flight_number": "F1", "origin": "A", "destination": "B", "scheduled_departure_time_est": "01:00:00", "scheduled_arrival_time_est": "02:00:00", "dates": {"2024-05-01": {"status": "boarding"}}}}, "users": {}, "reservations": {}}`, `flights[F1].dates[2024-05-01]: unknown status "boarding"`},
		{"unknown member", `{"flights": {}, "users": {}, "reservations": {"R1": {"reservation_id": "R1", "seat": "1A"}}}`, `reservations[R1]: json: unknown field "seat"`},
		{"key mismatch", `{"flights": {}, "users": {"u1": {"user_id": "u2"}}, "reservations": {}}`, `users[u1]: user_id is "u2"`},
		{"payment source", `{"flights": {}, "users": {"u1": {"user_id": "u1", "payment_methods": {"p1": {"source": "cash", "id": "p1"}}, "saved_passengers": [], "reservations": []}}, "reservations": {}}`, `users[u1].payment_methods[p1]: unknown source "cash"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Rows([]byte(tc.db))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
	// The seed of a valid document loads over the schema.
	ddl, _ := os.ReadFile(schemaPath)
	var buf bytes.Buffer
	if err := Seed(context.Background(), []byte(`{"flights": {}, "users": {}, "reservations": {}}`), string(ddl), &buf); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Format string `json:"format"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil || doc.Format != "weft.state/v1" {
		t.Fatalf("seed of an empty db: %v %q", err, doc.Format)
	}
}
