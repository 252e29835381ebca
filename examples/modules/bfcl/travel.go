package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/weft-dev/weft/sdk/pyvalue"
)

// TravelAPI (bfcl_eval func_source_code/travel_booking.py). Tokens, card,
// booking, transaction and insurance ids and card balances are randint
// draws of random.Random(random_seed, default 141053). "Today" (the
// traveller's age) is pinned to 2024-09-01, as the oracle ran.
var _ = addClass(&class{name: "TravelAPI", docs: "travel_booking", load: loadTravel, methods: map[string]method{
	"authenticate_travel":         trAuth,
	"travel_get_login_status":     trLoginStatus,
	"get_budget_fiscal_year":      func(_, _ *Dict) (any, error) { return dict("budget_fiscal_year", "2018"), nil },
	"register_credit_card":        trRegisterCard,
	"get_flight_cost":             trFlightCost,
	"get_credit_card_balance":     trCardBalance,
	"book_flight":                 trBook,
	"retrieve_invoice":            trInvoice,
	"get_booking_history":         trHistory,
	"list_all_airports":           func(_, _ *Dict) (any, error) { return anyStrings(travelAirports), nil },
	"cancel_booking":              trCancel,
	"compute_exchange_rate":       trExchange,
	"verify_traveler_information": trVerify,
	"set_budget_limit":            trBudget,
	"get_nearest_airport_by_city": trNearest,
	"purchase_insurance":          trInsurance,
	"contact_customer_support":    trSupport,
	"get_all_credit_cards":        func(self, _ *Dict) (any, error) { return dict("credit_card_list", self.G("credit_card_list")), nil },
}})

var travelAirports = []string{"RMS", "SBK", "MPC", "SVP", "SHD", "CDG", "LHR", "SSV", "OKD", "WLB", "PEK", "HND", "HKG", "CIA", "CRH", "ATV", "PHV", "GFD", "SFO", "LAX", "JFK", "ORD", "BOS"}

func anyStrings(s []string) []any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}

func loadTravel(cfg *Dict) (*Dict, error) {
	g := func(k string, def any) any { return scenario(cfg, k, def) }
	self := dict(
		"credit_card_list", g("credit_card_list", newDict()),
		"booking_record", g("booking_record", newDict()),
		"access_token", g("access_token", nil),
		"token_type", g("token_type", nil),
		"token_expires_in", g("token_expires_in", nil),
		"token_scope", g("token_scope", nil),
		"user_first_name", g("user_first_name", nil),
		"user_last_name", g("user_last_name", nil),
		"budget_limit", g("budget_limit", nil),
		"long_context", false,
	)
	seedRandom(self, g("random_seed", int64(141053)))
	return self, nil
}

func trRandint(self *Dict, a, b int64) int64 {
	r, save := rng(self)
	v := r.randint(a, b)
	save()
	return v
}

func cards(self *Dict) *Dict    { d, _ := self.G("credit_card_list").(*Dict); return d }
func bookings(self *Dict) *Dict { d, _ := self.G("booking_record").(*Dict); return d }

// dictHas is `k in d` for a Python dict with string keys.
func dictHas(d *Dict, k any) bool {
	s, ok := k.(string)
	return ok && d != nil && d.Has(s)
}

func tokenExpired(self *Dict) bool { return pyEq(self.G("token_expires_in"), int64(0)) }

func trAuth(self, a *Dict) (any, error) {
	self.Set("token_expires_in", int64(2))
	self.Set("access_token", strconv.FormatInt(trRandint(self, 100000, 999999), 10))
	self.Set("token_type", "Bearer")
	self.Set("token_scope", a.G("grant_type"))
	self.Set("user_first_name", a.G("user_first_name"))
	self.Set("user_last_name", a.G("user_last_name"))
	return dict("expires_in", int64(2), "access_token", self.G("access_token"), "token_type", "Bearer", "scope", a.G("grant_type")), nil
}

func trLoginStatus(self, _ *Dict) (any, error) {
	not := self.G("token_expires_in") == nil || tokenExpired(self)
	return dict("status", !not), nil
}

func trRegisterCard(self, a *Dict) (any, error) {
	if self.G("token_expires_in") == nil {
		return dict("error", "Token not initialized"), nil
	}
	if tokenExpired(self) {
		return dict("error", "Token expired"), nil
	}
	if !pyEq(a.G("access_token"), self.G("access_token")) {
		return dict("error", "Invalid access token"), nil
	}
	if dictHas(cards(self), a.G("card_number")) {
		return dict("error", "Card already registered"), nil
	}
	id := strconv.FormatInt(trRandint(self, 100000000000, 999999999999), 10)
	card := dict("card_number", a.G("card_number"), "expiration_date", a.G("expiration_date"), "cardholder_name", a.G("cardholder_name"),
		"card_verification_number", a.G("card_verification_number"))
	card.Set("balance", trRandint(self, 10000, 99999))
	cards(self).Set(id, card)
	return dict("card_id", id), nil
}

// flightCost is get_flight_cost's price (an error for Python's ValueError).
func flightCost(from, to, date, class any) (float64, error) {
	f, _ := str(from)
	t, _ := str(to)
	_, fok := from.(string)
	_, tok := to.(string)
	base, ok := travelBaseCosts[[2]string{f, t}]
	if !ok || !fok || !tok {
		return 0, raise("No available route for the given airports.")
	}
	var factor int64
	switch class {
	case "economy":
		factor = 1
	case "business":
		factor = 2
	case "first":
		factor = 5
	default:
		return 0, raise("Invalid travel class. Options are: economy, business, first.")
	}
	ds, ok := str(date)
	if !ok {
		return 0, raise("'%T' object is not iterable", date)
	}
	sum := 0
	for _, r := range ds {
		if unicode.IsDigit(r) {
			sum += int(r - '0')
		}
	}
	mult := int64(1)
	if sum%2 == 0 {
		mult = 2
	}
	return float64(base * factor * mult), nil
}

func trFlightCost(_, a *Dict) (any, error) {
	c, err := flightCost(a.G("travel_from"), a.G("travel_to"), a.G("travel_date"), a.G("travel_class"))
	if err != nil {
		return nil, err
	}
	return dict("travel_cost_list", []any{c}), nil
}

func cardKeysRepr(self *Dict) string {
	var parts []string
	for _, k := range cards(self).Keys() {
		parts = append(parts, pyvalue.ReprStr(k))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func trCardBalance(self, a *Dict) (any, error) {
	if tokenExpired(self) {
		return dict("error", "Token expired"), nil
	}
	if !pyEq(a.G("access_token"), self.G("access_token")) {
		return dict("error", "Invalid access token"), nil
	}
	if !dictHas(cards(self), a.G("card_id")) {
		return dict("error", "Card not registered. Here are a list of card_id's: "+cardKeysRepr(self)), nil
	}
	c, _ := cards(self).G(a.G("card_id").(string)).(*Dict)
	if c == nil || !c.Has("balance") {
		return nil, raise("'balance'")
	}
	return dict("card_balance", c.G("balance")), nil
}

func fail(k, msg string) *Dict { return dict(k, false, "error", msg) }

func trBook(self, a *Dict) (any, error) {
	const st = "booking_status"
	if tokenExpired(self) {
		return fail(st, "Token expired"), nil
	}
	if !pyEq(a.G("access_token"), self.G("access_token")) {
		return fail(st, "Invalid access token"), nil
	}
	cardID := a.G("card_id")
	if !dictHas(cards(self), cardID) {
		return fail(st, "Card not registered"), nil
	}
	card, _ := cards(self).G(cardID.(string)).(*Dict)
	if card == nil || !card.Has("balance") {
		return fail(st, "Balance not found"), nil
	}
	from, to := a.G("travel_from"), a.G("travel_to")
	if f, ok := from.(string); !ok || !slices.Contains(travelAirports, f) {
		return fail(st, "Invalid departure airport code: "+pyvalue.StrAny(from)), nil
	}
	if t, ok := to.(string); !ok || !slices.Contains(travelAirports, t) {
		return fail(st, "Invalid destination airport code: "+pyvalue.StrAny(to)), nil
	}
	date := a.G("travel_date")
	ds, ok := str(date)
	if !ok {
		return nil, raise("strptime() argument 1 must be str, not %T", date)
	}
	if _, ok := strptimeYMD(ds); !ok {
		return fail(st, "Invalid date format. Use YYYY-MM-DD."), nil
	}
	class := a.G("travel_class")
	if class != "economy" && class != "business" && class != "first" {
		return fail(st, "Invalid travel class. Must be one of {'economy', 'business', 'first'}"), nil
	}
	cost, err := flightCost(from, to, date, class)
	if err != nil {
		return fail(st, err.(*pyError).msg), nil
	}
	bal, _ := num(card.G("balance"))
	if bal < cost {
		return fail(st, "Insufficient funds"), nil
	}
	if bl := self.G("budget_limit"); bl != nil {
		b, _ := num(bl)
		if bal < b {
			return fail(st, "Balance is less than budget limit"), nil
		}
	}
	card.Set("balance", subNum(card.G("balance"), cost))
	bid := strconv.FormatInt(trRandint(self, 1000000, 9999999), 10)
	tid := strconv.FormatInt(trRandint(self, 10000000, 99999999), 10)
	bookings(self).Set(bid, dict("card_id", cardID, "travel_date", date, "travel_from", from, "travel_to", to,
		"travel_class", class, "travel_cost", cost, "transaction_id", tid))
	return dict("booking_id", bid, "transaction_id", tid, "booking_status", true, "booking_history", newDict()), nil
}

func trInvoice(self, a *Dict) (any, error) {
	if tokenExpired(self) {
		return dict("error", "Token expired"), nil
	}
	if !pyEq(a.G("access_token"), self.G("access_token")) {
		return dict("error", "Invalid access token"), nil
	}
	bid := opt(a, "booking_id", nil)
	if !dictHas(bookings(self), bid) {
		return dict("error", "Booking not found"), nil
	}
	b, _ := bookings(self).G(bid.(string)).(*Dict)
	inv := dict("booking_id", bid)
	for _, k := range []string{"travel_date", "travel_from", "travel_to", "travel_class", "travel_cost", "transaction_id"} {
		if b == nil || !b.Has(k) {
			return nil, raise("%s", pyvalue.ReprStr(k))
		}
		inv.Set(k, b.G(k))
	}
	return dict("invoice", inv), nil
}

func trHistory(self, a *Dict) (any, error) {
	if tokenExpired(self) {
		return dict("error", "Token expired"), nil
	}
	if !pyEq(a.G("access_token"), self.G("access_token")) {
		return dict("error", "Invalid access token"), nil
	}
	return dict("booking_history", deepCopy(self.G("booking_record"))), nil
}

func trCancel(self, a *Dict) (any, error) {
	const st = "cancel_status"
	if tokenExpired(self) {
		return fail(st, "Token expired"), nil
	}
	if !pyEq(a.G("access_token"), self.G("access_token")) {
		return fail(st, "Invalid access token"), nil
	}
	bid := a.G("booking_id")
	if !dictHas(bookings(self), bid) {
		return fail(st, "Booking not found"), nil
	}
	b, _ := bookings(self).G(bid.(string)).(*Dict)
	if b == nil || !b.Has("card_id") || !b.Has("travel_cost") {
		return nil, raise("'card_id'")
	}
	cid, _ := str(b.G("card_id"))
	card, ok := cards(self).G(cid).(*Dict)
	if !ok || !card.Has("balance") {
		return nil, raise("%s", pyvalue.ReprStr(cid))
	}
	card.Set("balance", addNum(card.G("balance"), b.G("travel_cost")))
	bookings(self).Del(bid.(string))
	return dict(st, true), nil
}

var exchangeRates = []struct {
	from, to string
	rate     pyNum
}{
	{"USD", "RMB", pyNum{isInt: true, i: 7, f: 7}}, {"USD", "EUR", pyNum{f: 0.8}}, {"USD", "JPY", pyNum{isInt: true, i: 110, f: 110}},
	{"USD", "GBP", pyNum{f: 0.7}}, {"USD", "CAD", pyNum{f: 1.3}}, {"USD", "AUD", pyNum{f: 1.4}},
	{"USD", "INR", pyNum{isInt: true, i: 70, f: 70}}, {"USD", "RUB", pyNum{isInt: true, i: 60, f: 60}},
	{"USD", "BRL", pyNum{f: 3.8}}, {"USD", "MXN", pyNum{isInt: true, i: 20, f: 20}},
}

func trExchange(_, a *Dict) (any, error) {
	b, t := a.G("base_currency"), a.G("target_currency")
	v, ok := toNum(a.G("value"))
	if !ok {
		return nil, raise("unsupported operand type(s)")
	}
	for _, r := range exchangeRates {
		if b == r.from && t == r.to {
			return dict("exchanged_value", v.f*r.rate.f), nil
		}
		if b == r.to && t == r.from {
			return dict("exchanged_value", pyvalue.Round(v.f/r.rate.f, 2)), nil
		}
	}
	return nil, raise("No available exchange rate for the given currencies.")
}

func trVerify(self, a *Dict) (any, error) {
	fn, ln := a.G("first_name"), a.G("last_name")
	if !pyEq(self.G("user_first_name"), fn) || !pyEq(self.G("user_last_name"), ln) {
		return dict("verification_status", false, "verification_failure", "Cannot book flight information for another user."+
			fmt.Sprintf("Expected %s %s, got %s %s", pyvalue.StrAny(self.G("user_first_name")), pyvalue.StrAny(self.G("user_last_name")), pyvalue.StrAny(fn), pyvalue.StrAny(ln))), nil
	}
	dob, ok := str(a.G("date_of_birth"))
	if !ok {
		return nil, raise("strptime() argument 1 must be str")
	}
	bd, ok := strptimeYMD(dob)
	if !ok {
		return dict("verification_status", false, "verification_failure", "Invalid date of birth format. Please use YYYY-MM-DD."), nil
	}
	// today is pinned to 2024-09-01.
	age := 2024 - bd.Year()
	if int(bd.Month()) > 9 || (int(bd.Month()) == 9 && bd.Day() > 1) {
		age--
	}
	if age < 18 {
		return dict("verification_status", false, "verification_failure", "Traveler must be at least 18 years old."), nil
	}
	pn, ok := str(a.G("passport_number"))
	if !ok {
		return nil, raise("'%T' object has no attribute 'startswith'", a.G("passport_number"))
	}
	if !strings.HasPrefix(pn, "US") {
		return dict("verification_status", false, "verification_failure", "Passport must be issued by the United States."), nil
	}
	return dict("verification_status", true), nil
}

func trBudget(self, a *Dict) (any, error) {
	if tokenExpired(self) {
		return dict("error", "Token expired"), nil
	}
	if !pyEq(a.G("access_token"), self.G("access_token")) {
		return dict("error", "Invalid access token"), nil
	}
	f, ok := num(a.G("budget_limit"))
	if !ok {
		return nil, raise("could not convert to float")
	}
	self.Set("budget_limit", f)
	return dict("budget_limit", f), nil
}

var airportMap = map[string]string{
	"Rivermist": "RMS", "Stonebrook": "SBK", "Maplecrest": "MPC", "Silverpine": "SVP", "Shadowridge": "SHD",
	"London": "LHR", "Paris": "CDG", "Sunset Valley": "SSV", "Oakendale": "OKD", "Willowbend": "WLB",
	"Crescent Hollow": "CRH", "Autumnville": "ATV", "Pinehaven": "PHV", "Greenfield": "GFD", "San Francisco": "SFO",
	"Los Angeles": "LAX", "New York": "JFK", "Chicago": "ORD", "Boston": "BOS", "Beijing": "PEK",
	"Hong Kong": "HKG", "Rome": "CIA", "Tokyo": "HND",
}

func trNearest(_, a *Dict) (any, error) {
	l, _ := str(a.G("location"))
	if v, ok := airportMap[l]; ok {
		return dict("nearest_airport", v), nil
	}
	return dict("nearest_airport", "Unknown"), nil
}

func trInsurance(self, a *Dict) (any, error) {
	const st = "insurance_status"
	if tokenExpired(self) {
		return fail(st, "Token expired"), nil
	}
	if !pyEq(a.G("access_token"), self.G("access_token")) {
		return fail(st, "Invalid access token"), nil
	}
	cost := a.G("insurance_cost")
	c, _ := num(cost)
	if bl := self.G("budget_limit"); bl != nil {
		b, _ := num(bl)
		if b < c {
			return fail(st, "Exceeded budget limit"), nil
		}
	}
	if !dictHas(bookings(self), a.G("booking_id")) {
		return fail(st, "Booking not found"), nil
	}
	if !dictHas(cards(self), a.G("card_id")) {
		return fail(st, "Credit card not registered"), nil
	}
	card, _ := cards(self).G(a.G("card_id").(string)).(*Dict)
	if card == nil || !card.Has("balance") {
		return nil, raise("'balance'")
	}
	card.Set("balance", subNum(card.G("balance"), cost))
	return dict("insurance_id", strconv.FormatInt(trRandint(self, 100000000, 999999999), 10), st, true), nil
}

func trSupport(self, a *Dict) (any, error) {
	if !dictHas(bookings(self), a.G("booking_id")) {
		return dict("error", "Booking not found"), nil
	}
	return dict("customer_support_message", "Thank you for contacting customer support. Your message has been received and we will get back to you shortly."), nil
}
