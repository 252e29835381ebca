package tasks

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/weft-dev/weft/core/state"
)

// TestGroupBindingsStayInModule: generated over a tau2 retail + airline
// group (namespaced tables), every user_id a tool of one server is called
// with is a user of that server's own users table, never the other's;
// the entity index used to sample anchors and ids across all tables.
func TestGroupBindingsStayInModule(t *testing.T) {
	ctx := context.Background()
	env, servers := retailAirlineEnv(t)
	users := map[string]map[string]bool{}
	for mod, table := range map[string]string{"tau2-retail": "tau2_retail__users", "airline": "airline__users"} {
		users[mod] = map[string]bool{}
		rows, err := queryColumn(ctx, env.Store, env.Seed, "SELECT user_id FROM "+table)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range rows {
			users[mod][u] = true
		}
		if len(users[mod]) == 0 {
			t.Fatalf("no users in %s", table)
		}
	}
	res, err := Generate(ctx, env, servers, GenOptions{Seed: 1, PerTool: 2, MaxRounds: 1})
	if err != nil {
		t.Fatal(err)
	}
	checked := map[string]int{}
	for _, tk := range res.Tasks {
		for _, a := range tk.Atomic {
			for _, c := range a.Reference {
				mod := ""
				switch {
				case strings.HasPrefix(c.Tool, "airline__"):
					mod = "airline"
				case strings.HasPrefix(c.Tool, "tau2-retail__"):
					mod = "tau2-retail"
				default:
					continue
				}
				var args map[string]any
				if err := json.Unmarshal(c.Arguments, &args); err != nil {
					t.Fatal(err)
				}
				u, ok := args["user_id"].(string)
				if !ok {
					continue
				}
				checked[mod]++
				if !users[mod][u] {
					t.Errorf("%s: %s(%s): user_id %q is not a %s user", tk.ID, c.Tool, c.Arguments, u, mod)
				}
			}
		}
	}
	if checked["airline"] == 0 || checked["tau2-retail"] == 0 {
		t.Fatalf("calls with a user_id checked: %v; want both servers' clashing tools", checked)
	}
}

// queryColumn returns the first column of q on v as text.
func queryColumn(ctx context.Context, st *state.Store, v *state.Version, q string) ([]string, error) {
	ws := st.Fork(v)
	var out []string
	err := ws.Do(func(u *state.Unit) error {
		rows, err := u.Query(ctx, q)
		if err != nil {
			return err
		}
		for _, r := range rows.Values {
			if s, ok := r[0].(string); ok {
				out = append(out, s)
			}
		}
		return nil
	})
	return out, err
}
