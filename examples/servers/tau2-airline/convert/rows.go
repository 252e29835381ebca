package main

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Airports is tau2's list_all_airports answer (a constant of its tool code,
// not in db.json), in its order: IATA code and city.
var Airports = [][2]string{
	{"SFO", "San Francisco"}, {"JFK", "New York"}, {"LAX", "Los Angeles"}, {"ORD", "Chicago"},
	{"DFW", "Dallas"}, {"DEN", "Denver"}, {"SEA", "Seattle"}, {"ATL", "Atlanta"},
	{"MIA", "Miami"}, {"BOS", "Boston"}, {"PHX", "Phoenix"}, {"IAH", "Houston"},
	{"LAS", "Las Vegas"}, {"MCO", "Orlando"}, {"EWR", "Newark"}, {"CLT", "Charlotte"},
	{"MSP", "Minneapolis"}, {"DTW", "Detroit"}, {"PHL", "Philadelphia"}, {"LGA", "LaGuardia"},
}

// Row is one table row: column -> value (JSON columns hold any JSON value).
type Row map[string]any

// Rows converts db.json into rows per table of schema.sql
// ({"flights": [...], "flight_dates": [...], ...}), pos columns numbering
// each object's entries in db.json order.
func Rows(db []byte) (map[string][]Row, error) {
	top, _, err := object(db)
	if err != nil {
		return nil, fmt.Errorf("db.json: %w", err)
	}
	out := map[string][]Row{}
	for i, a := range Airports {
		out["airports"] = append(out["airports"], Row{"iata": a[0], "pos": i, "city": a[1]})
	}
	for _, coll := range []string{"flights", "users", "reservations"} {
		if _, ok := top[coll]; !ok {
			return nil, fmt.Errorf("db.json: no %q object", coll)
		}
	}
	if err := flights(top["flights"], out); err != nil {
		return nil, err
	}
	if err := users(top["users"], out); err != nil {
		return nil, err
	}
	if err := reservations(top["reservations"], out); err != nil {
		return nil, err
	}
	return out, nil
}

type flightRec struct {
	FlightNumber string          `json:"flight_number"`
	Origin       string          `json:"origin"`
	Destination  string          `json:"destination"`
	Departure    string          `json:"scheduled_departure_time_est"`
	Arrival      string          `json:"scheduled_arrival_time_est"`
	Dates        json.RawMessage `json:"dates"`
}

type dateRec struct {
	Status       string          `json:"status"`
	Seats        *map[string]int `json:"available_seats"`
	Prices       *map[string]int `json:"prices"`
	ActualDep    *string         `json:"actual_departure_time_est"`
	ActualArr    *string         `json:"actual_arrival_time_est"`
	EstimatedDep *string         `json:"estimated_departure_time_est"`
	EstimatedArr *string         `json:"estimated_arrival_time_est"`
}

var cabins = []string{"basic_economy", "economy", "business"}

func flights(raw json.RawMessage, out map[string][]Row) error {
	recs, keys, err := object(raw)
	if err != nil {
		return fmt.Errorf("flights: %w", err)
	}
	for pos, k := range keys {
		var f flightRec
		if err := strict(recs[k], &f); err != nil {
			return fmt.Errorf("flights[%s]: %w", k, err)
		}
		if f.FlightNumber != k {
			return fmt.Errorf("flights[%s]: flight_number is %q", k, f.FlightNumber)
		}
		out["flights"] = append(out["flights"], Row{
			"flight_number": k, "pos": pos, "origin": f.Origin, "destination": f.Destination,
			"scheduled_departure_time_est": f.Departure, "scheduled_arrival_time_est": f.Arrival,
		})
		dates, dkeys, err := object(f.Dates)
		if err != nil {
			return fmt.Errorf("flights[%s].dates: %w", k, err)
		}
		for dpos, d := range dkeys {
			var r dateRec
			if err := strict(dates[d], &r); err != nil {
				return fmt.Errorf("flights[%s].dates[%s]: %w", k, d, err)
			}
			row := Row{"flight_number": k, "date": d, "pos": dpos, "status": r.Status}
			switch r.Status {
			case "available":
				if r.Seats == nil || r.Prices == nil {
					return fmt.Errorf("flights[%s].dates[%s]: available without seats or prices", k, d)
				}
				for _, c := range cabins {
					s, ok1 := (*r.Seats)[c]
					p, ok2 := (*r.Prices)[c]
					if !ok1 || !ok2 {
						return fmt.Errorf("flights[%s].dates[%s]: no %s seats or price", k, d, c)
					}
					row["seats_"+c], row["price_"+c] = s, p
				}
			case "landed", "cancelled", "on time", "delayed", "flying":
			default:
				return fmt.Errorf("flights[%s].dates[%s]: unknown status %q", k, d, r.Status)
			}
			for col, v := range map[string]*string{
				"actual_departure_time_est": r.ActualDep, "actual_arrival_time_est": r.ActualArr,
				"estimated_departure_time_est": r.EstimatedDep, "estimated_arrival_time_est": r.EstimatedArr,
			} {
				if v != nil {
					row[col] = *v
				}
			}
			out["flight_dates"] = append(out["flight_dates"], row)
		}
	}
	return nil
}

type userRec struct {
	UserID string `json:"user_id"`
	Name   struct {
		FirstName string `json:"first_name"`
		LastName  string `json:"last_name"`
	} `json:"name"`
	Address struct {
		Address1 string  `json:"address1"`
		Address2 *string `json:"address2"`
		City     string  `json:"city"`
		Country  string  `json:"country"`
		State    string  `json:"state"`
		Zip      string  `json:"zip"`
	} `json:"address"`
	Email           string          `json:"email"`
	DOB             string          `json:"dob"`
	PaymentMethods  json.RawMessage `json:"payment_methods"`
	SavedPassengers json.RawMessage `json:"saved_passengers"`
	Membership      string          `json:"membership"`
	Reservations    json.RawMessage `json:"reservations"`
}

type paymentRec struct {
	Source   string   `json:"source"`
	ID       string   `json:"id"`
	Brand    *string  `json:"brand"`
	LastFour *string  `json:"last_four"`
	Amount   *float64 `json:"amount"`
}

func users(raw json.RawMessage, out map[string][]Row) error {
	recs, keys, err := object(raw)
	if err != nil {
		return fmt.Errorf("users: %w", err)
	}
	for pos, k := range keys {
		var u userRec
		if err := strict(recs[k], &u); err != nil {
			return fmt.Errorf("users[%s]: %w", k, err)
		}
		if u.UserID != k {
			return fmt.Errorf("users[%s]: user_id is %q", k, u.UserID)
		}
		row := Row{
			"user_id": k, "pos": pos, "first_name": u.Name.FirstName, "last_name": u.Name.LastName,
			"address1": u.Address.Address1, "city": u.Address.City, "country": u.Address.Country,
			"state": u.Address.State, "zip": u.Address.Zip, "email": u.Email, "dob": u.DOB,
			"membership": u.Membership, "saved_passengers": u.SavedPassengers, "reservations": u.Reservations,
		}
		if u.Address.Address2 != nil {
			row["address2"] = *u.Address.Address2
		}
		out["users"] = append(out["users"], row)
		pms, pkeys, err := object(u.PaymentMethods)
		if err != nil {
			return fmt.Errorf("users[%s].payment_methods: %w", k, err)
		}
		for ppos, pk := range pkeys {
			var p paymentRec
			if err := strict(pms[pk], &p); err != nil {
				return fmt.Errorf("users[%s].payment_methods[%s]: %w", k, pk, err)
			}
			if p.ID != pk {
				return fmt.Errorf("users[%s].payment_methods[%s]: id is %q", k, pk, p.ID)
			}
			prow := Row{"user_id": k, "id": pk, "pos": ppos, "source": p.Source}
			switch p.Source {
			case "credit_card":
				if p.Brand == nil || p.LastFour == nil {
					return fmt.Errorf("users[%s].payment_methods[%s]: a credit card without brand or last_four", k, pk)
				}
				prow["brand"], prow["last_four"] = *p.Brand, *p.LastFour
			case "gift_card", "certificate":
				if p.Amount == nil {
					return fmt.Errorf("users[%s].payment_methods[%s]: a %s without amount", k, pk, p.Source)
				}
				prow["amount"] = *p.Amount
			default:
				return fmt.Errorf("users[%s].payment_methods[%s]: unknown source %q", k, pk, p.Source)
			}
			out["payment_methods"] = append(out["payment_methods"], prow)
		}
	}
	return nil
}

type reservationRec struct {
	ReservationID   string          `json:"reservation_id"`
	UserID          string          `json:"user_id"`
	Origin          string          `json:"origin"`
	Destination     string          `json:"destination"`
	FlightType      string          `json:"flight_type"`
	Cabin           string          `json:"cabin"`
	Flights         json.RawMessage `json:"flights"`
	Passengers      json.RawMessage `json:"passengers"`
	PaymentHistory  json.RawMessage `json:"payment_history"`
	CreatedAt       string          `json:"created_at"`
	TotalBaggages   int             `json:"total_baggages"`
	NonfreeBaggages int             `json:"nonfree_baggages"`
	Insurance       string          `json:"insurance"`
	Status          *string         `json:"status"`
}

func reservations(raw json.RawMessage, out map[string][]Row) error {
	recs, keys, err := object(raw)
	if err != nil {
		return fmt.Errorf("reservations: %w", err)
	}
	for pos, k := range keys {
		var r reservationRec
		if err := strict(recs[k], &r); err != nil {
			return fmt.Errorf("reservations[%s]: %w", k, err)
		}
		if r.ReservationID != k {
			return fmt.Errorf("reservations[%s]: reservation_id is %q", k, r.ReservationID)
		}
		row := Row{
			"reservation_id": k, "pos": pos, "user_id": r.UserID, "origin": r.Origin,
			"destination": r.Destination, "flight_type": r.FlightType, "cabin": r.Cabin,
			"flights": r.Flights, "passengers": r.Passengers, "payment_history": r.PaymentHistory,
			"created_at": r.CreatedAt, "total_baggages": r.TotalBaggages,
			"nonfree_baggages": r.NonfreeBaggages, "insurance": r.Insurance,
		}
		if r.Status != nil {
			row["status"] = *r.Status
		}
		for _, f := range []struct {
			name string
			v    json.RawMessage
		}{{"flights", r.Flights}, {"passengers", r.Passengers}, {"payment_history", r.PaymentHistory}} {
			if t := bytes.TrimSpace(f.v); len(t) == 0 || t[0] != '[' {
				return fmt.Errorf("reservations[%s].%s: not a list", k, f.name)
			}
		}
		out["reservations"] = append(out["reservations"], row)
	}
	return nil
}

// object decodes a JSON object into its members and their keys in
// document order.
func object(raw json.RawMessage) (map[string]json.RawMessage, []string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, fmt.Errorf("not a JSON object")
	}
	m := map[string]json.RawMessage{}
	var keys []string
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		k := kt.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		if _, dup := m[k]; dup {
			return nil, nil, fmt.Errorf("key %q twice", k)
		}
		m[k] = v
		keys = append(keys, k)
	}
	return m, keys, nil
}

// strict decodes a record refusing members the schema has no column for.
func strict(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
