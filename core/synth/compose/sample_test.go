package compose

import (
	"math/rand/v2"
	"testing"

	"github.com/weft-dev/weft/core/task"
)

// Follow-up reads replace tail atoms but never the only atom of a server:
// every sample of a two-server pool keeps both servers, and follow-ups
// are still inserted.
func TestSampleKeepsEveryServer(t *testing.T) {
	var pool []*atom
	for i, id := range []string{"o1", "o2", "o3", "o4"} {
		pool = append(pool, &atom{server: 0, tool: "modify_" + id, writes: map[string]bool{"orders|" + id: true}, keys: map[string]bool{id: true},
			a: task.Atomic{ID: "w", Bindings: map[string]string{"order_id": id}, Reference: []task.Call{{Tool: "modify", Arguments: []byte(`{"order_id":"` + id + `"}`)}}}, src: "w" + string(rune('0'+i))})
	}
	pool = append(pool, &atom{server: 0, tool: "get_order", writes: map[string]bool{}, keys: map[string]bool{},
		a: task.Atomic{ID: "r", Bindings: map[string]string{"order_id": "o9"}, Reference: []task.Call{{Tool: "get_order", Arguments: []byte(`{"order_id":"o9"}`)}}}, src: "r"})
	pool = append(pool, &atom{server: 1, tool: "get_flight", writes: map[string]bool{}, keys: map[string]bool{},
		a: task.Atomic{ID: "f", Bindings: map[string]string{"flight": "F1"}}, src: "f"})
	followUps := 0
	for seed := uint64(0); seed < 200; seed++ {
		rng := rand.New(rand.NewPCG(seed, 1))
		out := sample(pool, 2, 3, map[string]int{}, rng)
		servers := map[int]bool{}
		for _, a := range out {
			servers[a.server] = true
			if a.src != "r" && len(a.writes) == 0 && a.server == 0 {
				followUps++
			}
		}
		if len(out) != 3 || len(servers) != 2 {
			t.Fatalf("seed %d: %d atoms on servers %v, want 3 on both", seed, len(out), servers)
		}
	}
	if followUps == 0 {
		t.Fatal("no follow-up read in 200 samples")
	}
}
