package main

import (
	"fmt"
	"strings"

	"github.com/weft-dev/weft/sdk/pyvalue"
)

// TicketAPI (bfcl_eval func_source_code/ticket_api.py): a support ticket
// queue with a logged-in user.
var _ = addClass(&class{name: "TicketAPI", docs: "ticket_api", load: loadTicket, methods: map[string]method{
	"create_ticket":           ticketCreate,
	"get_ticket":              ticketGet,
	"close_ticket":            ticketClose,
	"resolve_ticket":          ticketResolve,
	"edit_ticket":             ticketEdit,
	"ticket_login":            ticketLogin,
	"ticket_get_login_status": func(self, _ *Dict) (any, error) { return dict("login_status", truthy(self.G("current_user"))), nil },
	"logout":                  ticketLogout,
	"get_user_tickets":        ticketUserTickets,
}})

func loadTicket(cfg *Dict) (*Dict, error) {
	return dict(
		"ticket_queue", scenario(cfg, "ticket_queue", []any{}),
		"ticket_counter", scenario(cfg, "ticket_counter", int64(1)),
		"current_user", scenario(cfg, "current_user", nil),
	), nil
}

func findTicket(self *Dict, id any) (*Dict, error) {
	q, _ := list(self.G("ticket_queue"))
	for _, t := range q {
		d, ok := t.(*Dict)
		if !ok || !d.Has("id") {
			return nil, raise("'id'")
		}
		if pyEq(d.G("id"), id) {
			return d, nil
		}
	}
	return nil, nil
}

func ticketCreate(self, a *Dict) (any, error) {
	if !truthy(self.G("current_user")) {
		return dict("error", "User not authenticated. Please log in to create a ticket."), nil
	}
	pr := opt(a, "priority", int64(1))
	p, ok := num(pr)
	if !ok {
		return nil, raise("'<' not supported")
	}
	if p < 1 || p > 5 {
		return dict("error", "Invalid priority. Priority must be between 1 and 5."), nil
	}
	t := dict("id", self.G("ticket_counter"), "title", a.G("title"), "description", opt(a, "description", ""),
		"status", "Open", "priority", pr, "created_by", self.G("current_user"))
	q, _ := list(self.G("ticket_queue"))
	self.Set("ticket_queue", append(q, t))
	c, _ := toInt(self.G("ticket_counter"))
	self.Set("ticket_counter", c+1)
	return t, nil
}

func ticketGet(self, a *Dict) (any, error) {
	t, err := findTicket(self, a.G("ticket_id"))
	if err != nil {
		return nil, err
	}
	if t == nil {
		return dict("error", fmt.Sprintf("Ticket with ID %s not found.", pyvalue.StrAny(a.G("ticket_id")))), nil
	}
	return t, nil
}

func ticketClose(self, a *Dict) (any, error) {
	id := a.G("ticket_id")
	t, err := findTicket(self, id)
	if err != nil {
		return nil, err
	}
	if t == nil {
		return dict("error", "Ticket with ID "+pyvalue.StrAny(id)+" not found."), nil
	}
	if t.G("status") == "Closed" {
		return dict("error", "Ticket with ID "+pyvalue.StrAny(id)+" is already closed."), nil
	}
	t.Set("status", "Closed")
	return dict("status", "Ticket "+pyvalue.StrAny(id)+" has been closed successfully."), nil
}

func ticketResolve(self, a *Dict) (any, error) {
	id := a.G("ticket_id")
	t, err := findTicket(self, id)
	if err != nil {
		return nil, err
	}
	if t == nil {
		return dict("error", "Ticket with ID "+pyvalue.StrAny(id)+" not found."), nil
	}
	if t.G("status") == "Resolved" {
		return dict("error", "Ticket with ID "+pyvalue.StrAny(id)+" is already resolved."), nil
	}
	t.Set("status", "Resolved")
	t.Set("resolution", a.G("resolution"))
	return dict("status", "Ticket "+pyvalue.StrAny(id)+" has been resolved successfully."), nil
}

func ticketEdit(self, a *Dict) (any, error) {
	id := a.G("ticket_id")
	t, err := findTicket(self, id)
	if err != nil {
		return nil, err
	}
	if t == nil {
		return dict("error", "Ticket with ID "+pyvalue.StrAny(id)+" not found."), nil
	}
	up, ok := a.G("updates").(*Dict)
	if !ok {
		return nil, raise("'%T' object has no attribute 'keys'", a.G("updates"))
	}
	var bad []string
	for _, k := range up.Keys() {
		switch k {
		case "title", "description", "status", "priority":
		default:
			bad = append(bad, k)
		}
	}
	if len(bad) > 0 {
		return dict("error", "Invalid fields for update: "+strings.Join(bad, ", ")), nil
	}
	for _, k := range up.Keys() {
		if v := up.G(k); v != nil {
			t.Set(k, v)
		}
	}
	return dict("status", "Ticket "+pyvalue.StrAny(id)+" has been updated successfully."), nil
}

func ticketLogin(self, a *Dict) (any, error) {
	if truthy(a.G("username")) && truthy(a.G("password")) {
		self.Set("current_user", a.G("username"))
		return dict("success", true), nil
	}
	return dict("success", false), nil
}

func ticketLogout(self, _ *Dict) (any, error) {
	if truthy(self.G("current_user")) {
		self.Set("current_user", nil)
		return dict("success", true), nil
	}
	return dict("success", false), nil
}

func ticketUserTickets(self, a *Dict) (any, error) {
	if !truthy(self.G("current_user")) {
		return []any{dict("error", "User not authenticated. Please log in to view tickets.")}, nil
	}
	q, _ := list(self.G("ticket_queue"))
	out := []any{}
	status := opt(a, "status", nil)
	for _, t := range q {
		d, _ := t.(*Dict)
		if d == nil || !d.Has("created_by") {
			return nil, raise("'created_by'")
		}
		if !pyEq(d.G("created_by"), self.G("current_user")) {
			continue
		}
		if truthy(status) {
			s, ok1 := str(d.G("status"))
			w, ok2 := str(status)
			if !ok1 || !ok2 {
				return nil, raise("'status' has no attribute 'lower'")
			}
			if !strings.EqualFold(s, w) {
				continue
			}
		}
		out = append(out, d)
	}
	return out, nil
}
