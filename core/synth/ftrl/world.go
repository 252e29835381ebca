package ftrl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// A World is the grounded data of one domain: entity kinds (a key, the
// attributes a question can ask about, and which attributes link to another
// kind) and their entities, read from a real database.
type World struct {
	Domain string
	Kinds  []*Kind
	// Entities per kind name, in the database's order.
	Entities map[string][]*Entity
	index    map[string]map[string]*Entity // kind -> joined key -> entity
}

// Kind is one entity kind: its SQL table in a deployed server, its key
// parameters (tool arguments) and its attributes.
type Kind struct {
	Name  string   `json:"name"`  // "user", "order", ...
	Noun  string   `json:"noun"`  // "user", "order", ... as in question text
	Table string   `json:"table"` // table of a deployed server
	Keys  []string `json:"keys"`  // key parameter names, e.g. ["order_id"]
	Attrs []Attr   `json:"attrs"`
}

// Attr is one attribute of a kind. Fields are the output fields its value
// has (one, or the key fields of the linked kind); Link names the kind
// whose key the value is ("" for a plain value).
type Attr struct {
	Name   string   `json:"name"`
	Phrase string   `json:"phrase"` // "the status", "the latest order", ...
	Fields []string `json:"fields"`
	Link   string   `json:"link,omitempty"`
}

// Entity is one grounded entity: its key values (Kind.Keys order) and its
// attribute values (Attr.Name -> one value per Attr.Fields entry).
type Entity struct {
	Kind   string              `json:"kind"`
	Key    []string            `json:"key"`
	Values map[string][]string `json:"values"`
}

// KeyString joins an entity key as FTRL answers join pieces: ", ".
func KeyString(key []string) string { return strings.Join(key, ", ") }

// Kind returns the kind named n, or nil.
func (w *World) Kind(n string) *Kind {
	for _, k := range w.Kinds {
		if k.Name == n {
			return k
		}
	}
	return nil
}

// Attr returns the attribute named n of k, or nil.
func (k *Kind) Attr(n string) *Attr {
	for i := range k.Attrs {
		if k.Attrs[i].Name == n {
			return &k.Attrs[i]
		}
	}
	return nil
}

// Lookup returns the entity of kind with the given key, or nil.
func (w *World) Lookup(kind string, key []string) *Entity {
	return w.index[kind][KeyString(key)]
}

func (w *World) add(e *Entity) {
	if w.index == nil {
		w.index = map[string]map[string]*Entity{}
		w.Entities = map[string][]*Entity{}
	}
	if w.index[e.Kind] == nil {
		w.index[e.Kind] = map[string]*Entity{}
	}
	k := KeyString(e.Key)
	if w.index[e.Kind][k] != nil {
		return
	}
	w.index[e.Kind][k] = e
	w.Entities[e.Kind] = append(w.Entities[e.Kind], e)
}

// prune drops every entity with a link attribute that points at no entity
// (a dangling reference in the source data), repeatedly, so every chain a
// question follows resolves.
func (w *World) prune() {
	for changed := true; changed; {
		changed = false
		for _, k := range w.Kinds {
			var keep []*Entity
			for _, e := range w.Entities[k.Name] {
				ok := true
				for _, a := range k.Attrs {
					if a.Link != "" && w.Lookup(a.Link, e.Values[a.Name]) == nil {
						ok = false
					}
				}
				if ok {
					keep = append(keep, e)
				} else {
					delete(w.index[k.Name], KeyString(e.Key))
					changed = true
				}
			}
			w.Entities[k.Name] = keep
		}
	}
}

// table is a seed table as rows of column -> value.
type table []map[string]any

// readSeed reads a seed file in either form core/state and sdk/spec take:
// {"table": [{column: value}]} or a weft.state/v1 export ({"format",
// "ddl", "tables": [{"name", "columns", "rows"}]}).
func readSeed(path string) (map[string]table, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("ftrl: reading seed: %w", err)
	}
	var probe struct {
		Format string `json:"format"`
		Tables []struct {
			Name    string   `json:"name"`
			Columns []string `json:"columns"`
			Rows    [][]any  `json:"rows"`
		} `json:"tables"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&probe); err == nil && probe.Format == "weft.state/v1" {
		out := map[string]table{}
		for _, t := range probe.Tables {
			rows := make(table, len(t.Rows))
			for i, r := range t.Rows {
				m := map[string]any{}
				for j, c := range t.Columns {
					if j < len(r) {
						m[c] = r[j]
					}
				}
				rows[i] = m
			}
			out[t.Name] = rows
		}
		return out, nil
	}
	var out map[string]table
	dec = json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		return nil, fmt.Errorf("ftrl: %s: not a seed ({table: rows} or weft.state/v1): %w", path, err)
	}
	return out, nil
}

// text renders a seed value as answer text: numbers as the database
// writes them (json.Number keeps 47.84 and 250 as written), booleans as
// "true"/"false".
func text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func str(row map[string]any, col string) string { return text(row[col]) }

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

func orderBy(rows table) table {
	out := slices.Clone(rows)
	slices.SortStableFunc(out, func(a, b map[string]any) int {
		x, _ := strconv.Atoi(text(a["pos"]))
		y, _ := strconv.Atoi(text(b["pos"]))
		return x - y
	})
	return out
}

// RetailWorld reads the tau2 retail database (the seed.json of
// examples/servers/tau2-retail: users, orders, products, variants) into
// kinds user, order, item and product.
func RetailWorld(seedPath string) (*World, error) {
	db, err := readSeed(seedPath)
	if err != nil {
		return nil, err
	}
	for _, t := range []string{"users", "orders", "products", "variants"} {
		if len(db[t]) == 0 {
			return nil, fmt.Errorf("ftrl: %s: retail seed has no %q rows", seedPath, t)
		}
	}
	w := &World{Domain: "retail", Kinds: []*Kind{
		{Name: "user", Noun: "user", Table: "users", Keys: []string{"user_id"}, Attrs: []Attr{
			{Name: "name", Phrase: "the full name", Fields: []string{"name"}},
			{Name: "zip", Phrase: "the zip code", Fields: []string{"zip"}},
			{Name: "city", Phrase: "the city", Fields: []string{"city"}},
			{Name: "email", Phrase: "the email address", Fields: []string{"email"}},
			{Name: "latest_order", Phrase: "the latest order", Fields: []string{"order_id"}, Link: "order"},
		}},
		{Name: "order", Noun: "order", Table: "orders", Keys: []string{"order_id"}, Attrs: []Attr{
			{Name: "status", Phrase: "the status", Fields: []string{"status"}},
			{Name: "first_item", Phrase: "the first item", Fields: []string{"item_id"}, Link: "item"},
			{Name: "item_count", Phrase: "the number of items", Fields: []string{"item_count"}},
			{Name: "ship_city", Phrase: "the shipping city", Fields: []string{"ship_city"}},
		}},
		{Name: "item", Noun: "item", Table: "items", Keys: []string{"item_id"}, Attrs: []Attr{
			{Name: "price", Phrase: "the price", Fields: []string{"price"}},
			{Name: "product", Phrase: "the product", Fields: []string{"product_id"}, Link: "product"},
			{Name: "available", Phrase: "the availability", Fields: []string{"available"}},
		}},
		{Name: "product", Noun: "product", Table: "products", Keys: []string{"product_id"}, Attrs: []Attr{
			{Name: "product_name", Phrase: "the name", Fields: []string{"product_name"}},
			{Name: "variant_count", Phrase: "the number of variants", Fields: []string{"variant_count"}},
		}},
	}}
	variants := map[string]int{}
	for _, v := range orderBy(db["variants"]) {
		variants[str(v, "product_id")]++
		w.add(&Entity{Kind: "item", Key: []string{str(v, "item_id")}, Values: map[string][]string{
			"price": {str(v, "price")}, "product": {str(v, "product_id")}, "available": {str(v, "available")},
		}})
	}
	for _, p := range orderBy(db["products"]) {
		id := str(p, "product_id")
		w.add(&Entity{Kind: "product", Key: []string{id}, Values: map[string][]string{
			"product_name": {str(p, "name")}, "variant_count": {strconv.Itoa(variants[id])},
		}})
	}
	for _, u := range orderBy(db["users"]) {
		orders := list(u["orders"])
		if len(orders) == 0 {
			continue
		}
		w.add(&Entity{Kind: "user", Key: []string{str(u, "user_id")}, Values: map[string][]string{
			"name": {str(u, "first_name") + " " + str(u, "last_name")}, "zip": {str(u, "zip")},
			"city": {str(u, "city")}, "email": {str(u, "email")}, "latest_order": {text(orders[len(orders)-1])},
		}})
	}
	for _, o := range orderBy(db["orders"]) {
		items := list(o["items"])
		if len(items) == 0 {
			continue
		}
		first, _ := items[0].(map[string]any)
		w.add(&Entity{Kind: "order", Key: []string{str(o, "order_id")}, Values: map[string][]string{
			"status": {str(o, "status")}, "first_item": {str(first, "item_id")},
			"item_count": {strconv.Itoa(len(items))}, "ship_city": {str(o, "city")},
		}})
	}
	w.prune()
	return w, nil
}

// AirlineWorld reads the tau2 airline database (the seed.json of
// examples/servers/tau2-airline: users, reservations, flights,
// flight_dates, airports) into kinds user, reservation, flight_date,
// flight and airport.
func AirlineWorld(seedPath string) (*World, error) {
	db, err := readSeed(seedPath)
	if err != nil {
		return nil, err
	}
	for _, t := range []string{"users", "reservations", "flights", "flight_dates", "airports"} {
		if len(db[t]) == 0 {
			return nil, fmt.Errorf("ftrl: %s: airline seed has no %q rows", seedPath, t)
		}
	}
	w := &World{Domain: "airline", Kinds: []*Kind{
		{Name: "user", Noun: "user", Table: "users", Keys: []string{"user_id"}, Attrs: []Attr{
			{Name: "name", Phrase: "the full name", Fields: []string{"name"}},
			{Name: "membership", Phrase: "the membership level", Fields: []string{"membership"}},
			{Name: "first_reservation", Phrase: "the first reservation", Fields: []string{"reservation_id"}, Link: "reservation"},
		}},
		{Name: "reservation", Noun: "reservation", Table: "reservations", Keys: []string{"reservation_id"}, Attrs: []Attr{
			{Name: "cabin", Phrase: "the cabin class", Fields: []string{"cabin"}},
			{Name: "first_flight", Phrase: "the first flight", Fields: []string{"flight_number", "date"}, Link: "flight_date"},
			{Name: "origin", Phrase: "the origin airport", Fields: []string{"iata"}, Link: "airport"},
			{Name: "passenger_count", Phrase: "the number of passengers", Fields: []string{"passenger_count"}},
		}},
		{Name: "flight_date", Noun: "flight on that date", Table: "flight_dates", Keys: []string{"flight_number", "date"}, Attrs: []Attr{
			{Name: "flight_status", Phrase: "the status", Fields: []string{"flight_status"}},
			{Name: "flight", Phrase: "the route", Fields: []string{"route_number"}, Link: "flight"},
		}},
		{Name: "flight", Noun: "flight", Table: "flights", Keys: []string{"route_number"}, Attrs: []Attr{
			{Name: "departure", Phrase: "the scheduled departure time", Fields: []string{"departure"}},
			{Name: "destination", Phrase: "the destination airport", Fields: []string{"iata"}, Link: "airport"},
		}},
		{Name: "airport", Noun: "airport", Table: "airports", Keys: []string{"iata"}, Attrs: []Attr{
			{Name: "airport_city", Phrase: "the city", Fields: []string{"airport_city"}},
		}},
	}}
	for _, a := range orderBy(db["airports"]) {
		w.add(&Entity{Kind: "airport", Key: []string{str(a, "iata")}, Values: map[string][]string{"airport_city": {str(a, "city")}}})
	}
	for _, f := range orderBy(db["flights"]) {
		w.add(&Entity{Kind: "flight", Key: []string{str(f, "flight_number")}, Values: map[string][]string{
			"departure": {str(f, "scheduled_departure_time_est")}, "destination": {str(f, "destination")},
		}})
	}
	for _, d := range orderBy(db["flight_dates"]) {
		w.add(&Entity{Kind: "flight_date", Key: []string{str(d, "flight_number"), str(d, "date")}, Values: map[string][]string{
			"flight_status": {str(d, "status")}, "flight": {str(d, "flight_number")},
		}})
	}
	for _, r := range orderBy(db["reservations"]) {
		fl := list(r["flights"])
		if len(fl) == 0 {
			continue
		}
		f, _ := fl[0].(map[string]any)
		w.add(&Entity{Kind: "reservation", Key: []string{str(r, "reservation_id")}, Values: map[string][]string{
			"cabin": {str(r, "cabin")}, "first_flight": {str(f, "flight_number"), str(f, "date")},
			"origin": {str(r, "origin")}, "passenger_count": {strconv.Itoa(len(list(r["passengers"])))},
		}})
	}
	for _, u := range orderBy(db["users"]) {
		res := list(u["reservations"])
		if len(res) == 0 {
			continue
		}
		w.add(&Entity{Kind: "user", Key: []string{str(u, "user_id")}, Values: map[string][]string{
			"name": {str(u, "first_name") + " " + str(u, "last_name")}, "membership": {str(u, "membership")},
			"first_reservation": {text(res[0])},
		}})
	}
	w.prune()
	return w, nil
}
