package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/weft-dev/weft/sdk/pyvalue"
)

// TradingBot (bfcl_eval func_source_code/trading_bot.py). Python keys
// orders by int (digit-string keys of the configuration become ints);
// weft keys them by the decimal string, other keys with the prefix "s:".
// The clock is fixed at 2024-09-01 10:30 (UTC, as the oracle ran);
// transaction timestamps are random.randint over the following day.
var _ = addClass(&class{name: "TradingBot", docs: "trading_bot", load: loadTrading, export: tradingExport, methods: map[string]method{
	"get_current_time":            func(_, _ *Dict) (any, error) { return dict("current_time", "10:30 AM"), nil },
	"get_symbol_by_name":          tbSymbolByName,
	"get_stock_info":              tbStockInfo,
	"get_order_details":           tbOrderDetails,
	"cancel_order":                tbCancelOrder,
	"place_order":                 tbPlaceOrder,
	"withdraw_funds":              tbWithdraw,
	"get_account_info":            tbAccountInfo,
	"trading_login":               tbLogin,
	"trading_get_login_status":    func(self, _ *Dict) (any, error) { return dict("status", truthy(self.G("authenticated"))), nil },
	"trading_logout":              tbLogout,
	"fund_account":                tbFund,
	"remove_stock_from_watchlist": tbRemoveWatch,
	"get_watchlist":               tbWatchlist,
	"get_order_history":           tbOrderHistory,
	"get_transaction_history":     tbTransactionHistory,
	"get_available_stocks":        tbAvailableStocks,
	"filter_stocks_by_price":      tbFilterByPrice,
	"add_to_watchlist":            tbAddWatch,
	"notify_price_change":         tbNotify,
}})

var tradingCurrent = time.Date(2024, 9, 1, 10, 30, 0, 0, time.UTC)

func defaultStocks() *Dict {
	s := newDict()
	add := func(sym string, p, pc, vol, ma5, ma20 float64) {
		s.Set(sym, dict("price", p, "percent_change", pc, "volume", vol, "MA(5)", ma5, "MA(20)", ma20))
	}
	add("AAPL", 227.16, 0.17, 2.552, 227.11, 227.09)
	add("GOOG", 2840.34, 0.24, 1.123, 2835.67, 2842.15)
	add("TSLA", 667.92, -0.12, 1.654, 671.15, 668.20)
	add("MSFT", 310.23, 0.09, 3.234, 309.88, 310.11)
	add("NVDA", 220.34, 0.34, 1.234, 220.45, 220.67)
	add("ALPH", 1320.45, -0.08, 1.567, 1321.12, 1325.78)
	add("OMEG", 457.23, 0.12, 2.345, 456.78, 458.12)
	add("QUAS", 725.89, -0.03, 1.789, 726.45, 728.00)
	add("NEPT", 88.34, 0.19, 0.654, 88.21, 88.67)
	add("SYNX", 345.67, 0.11, 2.112, 345.34, 346.12)
	add("ZETA", 22.09, -0.05, 0.789, 22.12, 22.34)
	return s
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

func loadTrading(cfg *Dict) (*Dict, error) {
	orders, _ := scenario(cfg, "orders", nil).(*Dict)
	if orders == nil {
		orders = dict(
			"12345", dict("id", int64(12345), "order_type", "Buy", "symbol", "AAPL", "price", 210.65, "amount", int64(10), "status", "Completed"),
			"12446", dict("id", int64(12446), "order_type", "Sell", "symbol", "GOOG", "price", 2840.56, "amount", int64(5), "status", "Pending"),
		)
	} else {
		norm := newDict()
		for _, k := range orders.Keys() {
			if isDigits(k) {
				n, err := strconv.ParseInt(k, 10, 64)
				if err != nil {
					return nil, raise("int: %s", k)
				}
				norm.Set(strconv.FormatInt(n, 10), orders.G(k))
			} else {
				norm.Set("s:"+k, orders.G(k))
			}
		}
		orders = norm
	}
	self := dict(
		"orders", orders,
		"account_info", scenario(cfg, "account_info", dict("account_id", int64(12345), "balance", 10000.0, "binding_card", int64(1974202140965533))),
		"authenticated", scenario(cfg, "authenticated", false),
		"market_status", scenario(cfg, "market_status", "Closed"),
		"order_counter", scenario(cfg, "order_counter", int64(12446)),
		"stocks", scenario(cfg, "stocks", defaultStocks()),
		"watch_list", scenario(cfg, "watch_list", []any{"NVDA"}),
		"transaction_history", scenario(cfg, "transaction_history", []any{}),
		"long_context", false,
	)
	seedRandom(self, scenario(cfg, "random_seed", int64(1053520)))
	return self, nil
}

func tradingExport(self *Dict) *Dict {
	pub := publicState(nil, self)
	if o, ok := pub.G("orders").(*Dict); ok {
		out := newDict()
		for _, k := range o.Keys() {
			out.Set(strings.TrimPrefix(k, "s:"), o.G(k))
		}
		pub.Set("orders", out)
	}
	return pub
}

func orders(self *Dict) *Dict { d, _ := self.G("orders").(*Dict); return d }

// orderKey is the key of an order id argument ("" when Python's dict
// could not hold it: only ints and strings are keys).
func orderKey(id any) string {
	if isInt(id) {
		n, _ := toInt(id)
		return strconv.FormatInt(n, 10)
	}
	if s, ok := id.(string); ok {
		return "s:" + s
	}
	return ""
}

func stocks(self *Dict) *Dict { d, _ := self.G("stocks").(*Dict); return d }

func tbTimestamp(self *Dict) string {
	r, save := rng(self)
	start := tradingCurrent.Unix()
	ts := r.randint(start, start+86400)
	save()
	return time.Unix(ts, 0).UTC().Format("2006-01-02 15:04:05")
}

var symbolMap = map[string]string{
	"Apple": "AAPL", "Google": "GOOG", "Tesla": "TSLA", "Microsoft": "MSFT", "Nvidia": "NVDA", "Zeta Corp": "ZETA",
	"Alpha Tech": "ALPH", "Omega Industries": "OMEG", "Quasar Ltd.": "QUAS", "Neptune Systems": "NEPT",
	"Synex Solutions": "SYNX", "Amazon": "AMZN", "Gorilla": "GORI",
}

func tbSymbolByName(_, a *Dict) (any, error) {
	n, _ := str(a.G("name"))
	if s, ok := symbolMap[n]; ok {
		return dict("symbol", s), nil
	}
	return dict("symbol", "Stock not found"), nil
}

func tbStockInfo(self, a *Dict) (any, error) {
	s, _ := str(a.G("symbol"))
	if v, ok := stocks(self).Get(s); ok {
		return v, nil
	}
	return dict("error", fmt.Sprintf("Stock with symbol '%s' not found.", pyvalue.StrAny(a.G("symbol")))), nil
}

func orderKeysRepr(self *Dict) string {
	parts := []string{}
	for _, k := range orders(self).Keys() {
		if strings.HasPrefix(k, "s:") {
			parts = append(parts, pyvalue.ReprStr(k[2:]))
		} else {
			parts = append(parts, k)
		}
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func tbOrderDetails(self, a *Dict) (any, error) {
	k := orderKey(a.G("order_id"))
	if v, ok := orders(self).Get(k); ok {
		return v, nil
	}
	return dict("error", fmt.Sprintf("Order with ID %s not found.", pyvalue.StrAny(a.G("order_id")))+"Here is the list of orders_id: "+orderKeysRepr(self)), nil
}

func tbCancelOrder(self, a *Dict) (any, error) {
	id := a.G("order_id")
	o, ok := orders(self).G(orderKey(id)).(*Dict)
	if !ok {
		return dict("error", fmt.Sprintf("Order with ID %s not found.", pyvalue.StrAny(id))), nil
	}
	if !o.Has("status") {
		return nil, raise("'status'")
	}
	if o.G("status") == "Completed" {
		return dict("error", fmt.Sprintf("Can't cancel order %s. Order is already completed.", pyvalue.StrAny(id))), nil
	}
	o.Set("status", "Cancelled")
	return dict("order_id", id, "status", "Cancelled"), nil
}

func balance(self *Dict) (*Dict, float64, bool) {
	ai, _ := self.G("account_info").(*Dict)
	if ai == nil {
		return nil, 0, false
	}
	b, ok := num(ai.G("balance"))
	return ai, b, ok
}

func tbPlaceOrder(self, a *Dict) (any, error) {
	if !truthy(self.G("authenticated")) {
		return dict("error", "User not authenticated. Please log in to place an order."), nil
	}
	sym, _ := str(a.G("symbol"))
	if !stocks(self).Has(sym) {
		return dict("error", "Invalid stock symbol: "+pyvalue.StrAny(a.G("symbol"))), nil
	}
	price, _ := num(a.G("price"))
	amount, _ := num(a.G("amount"))
	if price <= 0 || amount <= 0 {
		return dict("error", "Price and amount must be positive values."), nil
	}
	ot, _ := str(a.G("order_type"))
	if strings.ToLower(ot) == "buy" {
		total := price * float64(int64(amount))
		ai, bal, _ := balance(self)
		if ai == nil || !ai.Has("balance") {
			bal = 0
		}
		if total > bal {
			return dict("error", fmt.Sprintf("Insufficient funds: required $%.2f but only $%.2f available.", total, bal)), nil
		}
	}
	key := orderKey(self.G("order_counter"))
	id := self.G("order_counter")
	orders(self).Set(key, dict("id", id, "order_type", a.G("order_type"), "symbol", a.G("symbol"), "price", price, "amount", a.G("amount"), "status", "Open"))
	c, _ := toInt(id)
	self.Set("order_counter", c+1)
	return dict("order_id", id, "order_type", a.G("order_type"), "status", "Pending", "price", price, "amount", a.G("amount")), nil
}

func addNum(x, y any) any {
	a, _ := toNum(x)
	b, _ := toNum(y)
	if a.isInt && b.isInt {
		return a.i + b.i
	}
	return a.f + b.f
}

func subNum(x, y any) any {
	a, _ := toNum(x)
	b, _ := toNum(y)
	if a.isInt && b.isInt {
		return a.i - b.i
	}
	return a.f - b.f
}

func tbAppendTx(self *Dict, typ string, amt any) {
	ts := tbTimestamp(self)
	h, _ := list(self.G("transaction_history"))
	self.Set("transaction_history", append(h, dict("type", typ, "amount", amt, "timestamp", ts)))
}

func tbWithdraw(self, a *Dict) (any, error) {
	if !truthy(self.G("authenticated")) {
		return dict("error", "User not authenticated. Please log in to make a transaction."), nil
	}
	if self.G("market_status") != "Open" {
		return dict("error", "Market is closed. Transactions are not allowed."), nil
	}
	amt := a.G("amount")
	f, _ := num(amt)
	if f <= 0 {
		return dict("error", "Transaction amount must be positive."), nil
	}
	ai, bal, _ := balance(self)
	if f > bal {
		return dict("error", "Insufficient funds for withdrawal."), nil
	}
	nb := subNum(ai.G("balance"), amt)
	ai.Set("balance", nb)
	tbAppendTx(self, "withdrawal", amt)
	return dict("status", "Withdrawal successful", "new_balance", nb), nil
}

func tbAccountInfo(self, _ *Dict) (any, error) {
	if !truthy(self.G("authenticated")) {
		return dict("error", "User not authenticated. Please log in to view account information."), nil
	}
	return self.G("account_info"), nil
}

func tbLogin(self, _ *Dict) (any, error) {
	if truthy(self.G("authenticated")) {
		return dict("status", "Already logged in"), nil
	}
	self.Set("authenticated", true)
	return dict("status", "Logged in successfully"), nil
}

func tbLogout(self, _ *Dict) (any, error) {
	if !truthy(self.G("authenticated")) {
		return dict("status", "No user is currently logged in"), nil
	}
	self.Set("authenticated", false)
	return dict("status", "Logged out successfully"), nil
}

func tbFund(self, a *Dict) (any, error) {
	if !truthy(self.G("authenticated")) {
		return dict("error", "User not authenticated. Please log in to fund the account."), nil
	}
	amt := a.G("amount")
	f, _ := num(amt)
	if f <= 0 {
		return dict("error", "Funding amount must be positive."), nil
	}
	ai, _, _ := balance(self)
	nb := addNum(ai.G("balance"), amt)
	ai.Set("balance", nb)
	tbAppendTx(self, "deposit", amt)
	return dict("status", "Account funded successfully", "new_balance", nb), nil
}

func listIndex(l []any, v any) int {
	for i, x := range l {
		if pyEq(x, v) {
			return i
		}
	}
	return -1
}

func tbRemoveWatch(self, a *Dict) (any, error) {
	if !truthy(self.G("authenticated")) {
		return dict("error", "User not authenticated. Please log in to modify the watchlist."), nil
	}
	wl, _ := list(self.G("watch_list"))
	i := listIndex(wl, a.G("symbol"))
	if i < 0 {
		return dict("error", fmt.Sprintf("Stock %s not found in watchlist.", pyvalue.StrAny(a.G("symbol")))), nil
	}
	self.Set("watch_list", append(wl[:i:i], wl[i+1:]...))
	return dict("status", fmt.Sprintf("Stock %s removed from watchlist successfully.", pyvalue.StrAny(a.G("symbol")))), nil
}

func tbWatchlist(self, _ *Dict) (any, error) {
	if !truthy(self.G("authenticated")) {
		return []any{"Error: User not authenticated. Please log in to view the watchlist."}, nil
	}
	return dict("watchlist", self.G("watch_list")), nil
}

func tbOrderHistory(self, _ *Dict) (any, error) {
	if !truthy(self.G("authenticated")) {
		return []any{dict("error", "User not authenticated. Please log in to view order history.")}, nil
	}
	ids := []any{}
	for _, k := range orders(self).Keys() {
		if strings.HasPrefix(k, "s:") {
			ids = append(ids, k[2:])
		} else {
			n, _ := strconv.ParseInt(k, 10, 64)
			ids = append(ids, n)
		}
	}
	return dict("history", ids), nil
}

func tbTransactionHistory(self, a *Dict) (any, error) {
	if !truthy(self.G("authenticated")) {
		return []any{dict("error", "User not authenticated. Please log in to view transaction history.")}, nil
	}
	start := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	end := time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC)
	parse := func(v any, layout, pylayout string) (time.Time, error) {
		s, ok := str(v)
		if !ok {
			return time.Time{}, raise("strptime() argument 1 must be str, not %T", v)
		}
		t, err := time.Parse(layout, s)
		if err != nil {
			return time.Time{}, raise("time data %s does not match format '%s'", pyvalue.ReprStr(s), pylayout)
		}
		return t, nil
	}
	var err error
	if v := opt(a, "start_date", nil); truthy(v) {
		if start, err = parse(v, "2006-01-02", "%Y-%m-%d"); err != nil {
			return nil, err
		}
	}
	if v := opt(a, "end_date", nil); truthy(v) {
		if end, err = parse(v, "2006-01-02", "%Y-%m-%d"); err != nil {
			return nil, err
		}
	}
	h, _ := list(self.G("transaction_history"))
	out := []any{}
	for _, tx := range h {
		d, _ := tx.(*Dict)
		if d == nil || !d.Has("timestamp") {
			return nil, raise("'timestamp'")
		}
		t, err := parse(d.G("timestamp"), "2006-01-02 15:04:05", "%Y-%m-%d %H:%M:%S")
		if err != nil {
			return nil, err
		}
		if !t.Before(start) && !t.After(end) {
			out = append(out, d)
		}
	}
	return dict("transaction_history", out), nil
}

func tbAvailableStocks(_, a *Dict) (any, error) {
	switch a.G("sector") {
	case "Technology":
		return dict("stock_list", []any{"AAPL", "GOOG", "MSFT", "NVDA"}), nil
	case "Automobile":
		return dict("stock_list", []any{"TSLA", "F", "GM"}), nil
	}
	return dict("stock_list", []any{}), nil
}

func tbFilterByPrice(self, a *Dict) (any, error) {
	l, _ := list(a.G("stocks"))
	lo, _ := num(a.G("min_price"))
	hi, _ := num(a.G("max_price"))
	out := []any{}
	for _, s := range l {
		k, _ := str(s)
		p := 0.0
		if st, ok := stocks(self).G(k).(*Dict); ok {
			if v, ok := st.Get("price"); ok {
				p, _ = num(v)
			}
		}
		if p >= lo && p <= hi {
			out = append(out, s)
		}
	}
	return dict("filtered_stocks", out), nil
}

func tbAddWatch(self, a *Dict) (any, error) {
	wl, _ := list(self.G("watch_list"))
	s := a.G("stock")
	if listIndex(wl, s) < 0 {
		if k, ok := str(s); ok && stocks(self).Has(k) {
			wl = append(wl, s)
			self.Set("watch_list", wl)
		}
	}
	return dict("watchlist", wl), nil
}

func tbNotify(self, a *Dict) (any, error) {
	l, _ := list(a.G("stocks"))
	th, _ := num(a.G("threshold"))
	var changed []string
	for _, s := range l {
		k, _ := str(s)
		st, ok := stocks(self).G(k).(*Dict)
		if !ok {
			continue
		}
		pc, _ := num(st.G("percent_change"))
		if pc < 0 {
			pc = -pc
		}
		if pc >= th {
			changed = append(changed, k)
		}
	}
	if len(changed) > 0 {
		return dict("notification", "Stocks "+strings.Join(changed, ", ")+" have significant price changes."), nil
	}
	return dict("notification", "No significant price changes in the selected stocks."), nil
}
