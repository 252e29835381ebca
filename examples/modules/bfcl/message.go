package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/weft-dev/weft/sdk/pyvalue"
)

// MessageAPI (bfcl_eval func_source_code/message_api.py): a workspace's
// users and an inbox of {receiver_id: message} entries; message ids are
// drawn from random.Random(random_seed, default 200191).
var _ = addClass(&class{name: "MessageAPI", docs: "message_api", load: loadMessage, methods: map[string]method{
	"list_users":               msgListUsers,
	"get_user_id":              msgGetUserID,
	"message_login":            msgLogin,
	"message_get_login_status": func(self, _ *Dict) (any, error) { return dict("login_status", truthy(self.G("current_user"))), nil },
	"send_message":             msgSend,
	"delete_message":           msgDelete,
	"view_messages_sent":       msgViewSent,
	"add_contact":              msgAddContact,
	"search_messages":          msgSearch,
	"get_message_stats":        msgStats,
}})

func loadMessage(cfg *Dict) (*Dict, error) {
	self := dict(
		"generated_ids", scenario(cfg, "generated_ids", []any{}),
		"user_count", scenario(cfg, "user_count", int64(4)),
		"user_map", scenario(cfg, "user_map", dict("Alice", "USR001", "Bob", "USR002", "Catherine", "USR003", "Daniel", "USR004")),
		"inbox", scenario(cfg, "inbox", []any{dict("USR002", "My name is Alice. I want to connect."), dict("USR003", "Could you upload the file?"), dict("USR004", "Could you upload the file?")}),
		"message_count", scenario(cfg, "message_count", int64(3)),
		"current_user", scenario(cfg, "current_user", nil),
	)
	seedRandom(self, scenario(cfg, "random_seed", int64(200191)))
	return self, nil
}

func userMap(self *Dict) *Dict { d, _ := self.G("user_map").(*Dict); return d }

func mapHasValue(d *Dict, v any) bool {
	for _, x := range d.Values() {
		if pyEq(x, v) {
			return true
		}
	}
	return false
}

func msgListUsers(self, _ *Dict) (any, error) {
	keys := []any{}
	for _, k := range userMap(self).Keys() {
		keys = append(keys, k)
	}
	return dict("user_list", keys), nil
}

func msgGetUserID(self, a *Dict) (any, error) {
	u, _ := str(a.G("user"))
	v, ok := userMap(self).Get(u)
	if !ok {
		return dict("error", fmt.Sprintf("User '%s' not found in the workspace.", pyvalue.StrAny(a.G("user")))), nil
	}
	return dict("user_id", v), nil
}

func msgLogin(self, a *Dict) (any, error) {
	id := a.G("user_id")
	if !mapHasValue(userMap(self), id) {
		return dict("login_status", false, "message", fmt.Sprintf("User ID '%s' not found.", pyvalue.StrAny(id))), nil
	}
	self.Set("current_user", id)
	return dict("login_status", true, "message", fmt.Sprintf("User '%s' logged in successfully.", pyvalue.StrAny(id))), nil
}

func msgSend(self, a *Dict) (any, error) {
	if !truthy(self.G("current_user")) {
		return dict("error", "No user is currently logged in."), nil
	}
	rid := a.G("receiver_id")
	if !mapHasValue(userMap(self), rid) {
		return dict("error", fmt.Sprintf("Receiver ID '%s' not found.", pyvalue.StrAny(rid))), nil
	}
	r, save := rng(self)
	ids, _ := list(self.G("generated_ids"))
	has := func(n int64) bool {
		return slices.ContainsFunc(ids, func(x any) bool { return pyEq(x, n) })
	}
	id := r.randint(10000, 99999)
	for has(id) {
		id = r.randint(10000, 99999)
	}
	save()
	ids = append(ids, id)
	slices.SortFunc(ids, func(x, y any) int {
		a, _ := num(x)
		b, _ := num(y)
		switch {
		case a < b:
			return -1
		case a > b:
			return 1
		}
		return 0
	})
	self.Set("generated_ids", ids)
	inbox, _ := list(self.G("inbox"))
	key, _ := str(rid)
	self.Set("inbox", append(inbox, dict(key, a.G("message"))))
	c, _ := toInt(self.G("message_count"))
	self.Set("message_count", c+1)
	return dict("sent_status", true, "message_id", dict("new_id", id), "message", fmt.Sprintf("Message sent to '%s' successfully.", key)), nil
}

func firstItem(m any) (string, any) {
	d, _ := m.(*Dict)
	if d == nil || d.Len() == 0 {
		return "", nil
	}
	k := d.Keys()[0]
	return k, d.G(k)
}

func msgDelete(self, a *Dict) (any, error) {
	if !truthy(self.G("current_user")) {
		return dict("error", "No user is currently logged in."), nil
	}
	inbox, _ := list(self.G("inbox"))
	rid := a.G("receiver_id")
	for i := len(inbox) - 1; i >= 0; i-- {
		k, _ := firstItem(inbox[i])
		if pyEq(k, rid) {
			// list.remove drops the first entry equal to this one.
			j := slices.IndexFunc(inbox, func(x any) bool { return pyEq(x, inbox[i]) })
			self.Set("inbox", append(inbox[:j:j], inbox[j+1:]...))
			return dict("deleted_status", true, "receiver_id", k, "message", fmt.Sprintf("Receiver %s's latest message deleted successfully.", pyvalue.StrAny(rid))), nil
		}
	}
	return dict("error", fmt.Sprintf("Receiver ID %s not found.", pyvalue.StrAny(rid))), nil
}

func msgViewSent(self, _ *Dict) (any, error) {
	if !truthy(self.G("current_user")) {
		return dict("error", "No user is currently logged in."), nil
	}
	sent := newDict()
	inbox, _ := list(self.G("inbox"))
	for _, m := range inbox {
		k, v := firstItem(m)
		l, _ := list(sent.G(k))
		sent.Set(k, append(l, v))
	}
	return dict("messages", sent), nil
}

func msgAddContact(self, a *Dict) (any, error) {
	name, _ := str(a.G("user_name"))
	um := userMap(self)
	if um.Has(name) {
		return dict("error", fmt.Sprintf("User name '%s' already exists.", name)), nil
	}
	c, _ := toInt(self.G("user_count"))
	self.Set("user_count", c+1)
	id := fmt.Sprintf("USR%03d", c+1)
	if mapHasValue(um, id) {
		return dict("error", fmt.Sprintf("User ID '%s' already exists.", id)), nil
	}
	um.Set(name, id)
	return dict("added_status", true, "user_id", id, "message", fmt.Sprintf("Contact '%s' added successfully.", name)), nil
}

func msgSearch(self, a *Dict) (any, error) {
	if !truthy(self.G("current_user")) {
		return dict("error", "No user is currently logged in."), nil
	}
	kw, ok := str(a.G("keyword"))
	if !ok {
		return nil, raise("'keyword' has no attribute 'lower'")
	}
	kw = strings.ToLower(kw)
	res := []any{}
	inbox, _ := list(self.G("inbox"))
	for _, m := range inbox {
		k, v := firstItem(m)
		s, ok := str(v)
		if !ok {
			return nil, raise("'%T' object has no attribute 'lower'", v)
		}
		if strings.Contains(strings.ToLower(s), kw) {
			res = append(res, dict("receiver_id", k, "message", v))
		}
	}
	return dict("results", res), nil
}

func msgStats(self, _ *Dict) (any, error) {
	if !truthy(self.G("current_user")) {
		return dict("error", "No user is currently logged in."), nil
	}
	inbox, _ := list(self.G("inbox"))
	contacts := map[string]bool{}
	for _, m := range inbox {
		k, _ := firstItem(m)
		contacts[k] = true
	}
	return dict("stats", dict("received_count", int64(len(inbox)), "total_contacts", int64(len(contacts)))), nil
}
