package compose

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/sdk/spec"
)

// person is one user row's identity: the columns a person is identified
// by in tau2-style users tables (user_id, first_name, last_name, email).
type person struct {
	id, first, last, email string
}

// seedUsers returns the users of a server seed ({"table": [rows]} or
// weft.state/v1), by user_id, in seed order; nil when the seed has no
// users table with those four columns.
func seedUsers(raw json.RawMessage) ([]person, error) {
	var out []person
	err := editUsers(raw, func(row map[string]any) bool {
		p := person{}
		p.id, _ = row["user_id"].(string)
		p.first, _ = row["first_name"].(string)
		p.last, _ = row["last_name"].(string)
		p.email, _ = row["email"].(string)
		if p.id != "" && p.email != "" {
			out = append(out, p)
		}
		return false
	}, nil)
	return out, err
}

// editUsers calls f with each users row (as column -> value); when f
// reports a change and out is set, *out is the seed rewritten. Numbers
// keep their JSON text.
func editUsers(raw json.RawMessage, f func(map[string]any) bool, out *json.RawMessage) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return fmt.Errorf("compose: seed: %w", err)
	}
	changed := false
	if doc["format"] == "weft.state/v1" {
		tables, _ := doc["tables"].([]any)
		for _, t := range tables {
			tm, _ := t.(map[string]any)
			if tm == nil || tm["name"] != "users" {
				continue
			}
			cols, _ := tm["columns"].([]any)
			rows, _ := tm["rows"].([]any)
			for _, r := range rows {
				vals, _ := r.([]any)
				if len(vals) != len(cols) {
					continue
				}
				m := map[string]any{}
				for i, c := range cols {
					m[fmt.Sprint(c)] = vals[i]
				}
				if f(m) {
					changed = true
					for i, c := range cols {
						vals[i] = m[fmt.Sprint(c)]
					}
				}
			}
		}
	} else {
		rows, _ := doc["users"].([]any)
		for _, r := range rows {
			if m, ok := r.(map[string]any); ok && f(m) {
				changed = true
			}
		}
	}
	if changed && out != nil {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(doc); err != nil {
			return err
		}
		*out = bytes.TrimSpace(buf.Bytes())
	}
	return nil
}

// share is the shared entities of a composition: server index -> the
// other server's old user id -> {the user as it was, the person of
// server 0 it becomes}.
type share map[int]map[string][2]person

// shareEntities picks up to n people to be the same person in server 0
// and in each other server with a users table: a user of server 0 bound
// by one of its pool's atomic tasks is paired with a user bound by the
// other server's pool (both in pool order), and the other server's seed
// is rewritten so that its user carries server 0's user_id, names and
// email (every occurrence of the old user_id, as a JSON string, follows).
// The servers are copies; the inputs are not changed. An id the other
// server already has is skipped.
func shareEntities(servers []*spec.Server, pools [][]*task.Task, n int) ([]*spec.Server, share, error) {
	out := make([]*spec.Server, len(servers))
	copy(out, servers)
	sh := share{}
	if n <= 0 || len(servers) < 2 {
		return out, sh, nil
	}
	users0, err := seedUsers(servers[0].Seed)
	if err != nil || users0 == nil {
		return out, sh, err
	}
	byID0 := map[string]person{}
	for _, p := range users0 {
		byID0[p.id] = p
	}
	bound0 := boundUsers(pools[0], byID0)
	for si := 1; si < len(servers); si++ {
		users, err := seedUsers(servers[si].Seed)
		if err != nil {
			return nil, nil, err
		}
		if users == nil {
			continue
		}
		byID := map[string]person{}
		for _, p := range users {
			byID[p.id] = p
		}
		pairs := map[string]person{}
		var order []string
		taken := map[string]bool{}
		j := 0
		for _, old := range boundUsers(pools[si], byID) {
			if len(pairs) >= n {
				break
			}
			for j < len(bound0) && (taken[bound0[j]] || byID[bound0[j]].id != "") {
				j++
			}
			if j >= len(bound0) {
				break
			}
			p := byID0[bound0[j]]
			taken[p.id] = true
			pairs[old] = p
			order = append(order, old)
		}
		if len(pairs) == 0 {
			continue
		}
		raw := string(servers[si].Seed)
		for _, old := range order {
			raw = strings.ReplaceAll(raw, quote(old), quote(pairs[old].id))
		}
		rewritten := json.RawMessage(raw)
		byNew := map[string]person{}
		for _, p := range pairs {
			byNew[p.id] = p
		}
		if err := editUsers(json.RawMessage(raw), func(m map[string]any) bool {
			id, _ := m["user_id"].(string)
			p, ok := byNew[id]
			if !ok {
				return false
			}
			m["first_name"], m["last_name"], m["email"] = p.first, p.last, p.email
			return true
		}, &rewritten); err != nil {
			return nil, nil, err
		}
		s := *servers[si]
		s.Seed = rewritten
		out[si] = &s
		m := map[string][2]person{}
		for old, p := range pairs {
			m[old] = [2]person{byID[old], p}
		}
		sh[si] = m
	}
	return out, sh, nil
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// boundUsers returns the user ids of users bound by the pool's atomic
// tasks (binding user_id), distinct, in pool order.
func boundUsers(pool []*task.Task, users map[string]person) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range pool {
		for _, a := range t.Atomic {
			if id := a.Bindings["user_id"]; id != "" && users[id].id != "" && !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	return out
}

// rebind rewrites an atomic task of a server whose user became a shared
// person: the old user_id, email and (in arguments) names become the
// person's, everywhere the task names them.
func rebind(a task.Atomic, pairs map[string][2]person) (task.Atomic, string) {
	id := a.Bindings["user_id"]
	pp, ok := pairs[id]
	if !ok {
		// Bound to a shared user by another key (an email) or not at all.
		for old, q := range pairs {
			for _, v := range a.Bindings {
				if v == q[0].email || v == old {
					pp, ok = q, true
				}
			}
		}
		if !ok {
			return a, ""
		}
	}
	old, nw := pp[0], pp[1]
	text := strings.NewReplacer(old.id, nw.id, old.email, nw.email)
	args := strings.NewReplacer(quote(old.id), quote(nw.id), quote(old.email), quote(nw.email), quote(old.first), quote(nw.first), quote(old.last), quote(nw.last))
	a.Request = text.Replace(a.Request)
	b := make(map[string]string, len(a.Bindings))
	for k, v := range a.Bindings {
		b[k] = text.Replace(v)
	}
	a.Bindings = b
	a.Reference = append([]task.Call(nil), a.Reference...)
	for i := range a.Reference {
		a.Reference[i].Arguments = json.RawMessage(args.Replace(string(a.Reference[i].Arguments)))
	}
	a.Checks = append([]task.Check(nil), a.Checks...)
	for i := range a.Checks {
		if len(a.Checks[i].Arguments) > 0 {
			a.Checks[i].Arguments = json.RawMessage(args.Replace(string(a.Checks[i].Arguments)))
		}
	}
	return a, nw.id
}
