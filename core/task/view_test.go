package task

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
)

type step struct {
	content string
	done    bool
}

// converse runs u against an agent that answers every user message with
// one message, and returns what the user said until done.
func converse(t *testing.T, u User) []step {
	t.Helper()
	var toUser []string
	var out []step
	for range 20 {
		c, done, err := u.Next(context.Background(), toUser)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, step{c, done})
		if done {
			return out
		}
		toUser = append(toUser, "agent reply")
	}
	t.Fatal("user never done")
	return nil
}

func mustUser(t *testing.T, task *Task, view string, opts UserOptions) User {
	t.Helper()
	u, err := NewUser(task, view, opts)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestAgenticUser(t *testing.T) {
	task := chain()
	got := converse(t, mustUser(t, task, ViewAgentic, UserOptions{}))
	want := []step{{"Cancel things.", false}, {"", true}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("agentic = %+v", got)
	}
}

func TestSimUser(t *testing.T) {
	task := chain()
	task.Identity = "I am Ann."
	got := converse(t, mustUser(t, task, ViewSimUser, UserOptions{}))
	want := []step{{"I am Ann. r1", false}, {"r2", false}, {"r3", false}, {"", true}}
	if len(got) != len(want) {
		t.Fatalf("simuser = %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("turn %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	// DAG order, not file order: b and c both after a, listed b, c; d after c.
	dag := &Task{ID: "d", Brief: "b", Atomic: []Atomic{
		{ID: "a", Request: "ra"}, {ID: "c", Request: "rc", After: []string{"a"}},
		{ID: "b", Request: "rb", After: []string{"a"}}, {ID: "d", Request: "rd", After: []string{"c"}},
	}}
	var says []string
	for _, s := range converse(t, mustUser(t, dag, ViewSimUser, UserOptions{})) {
		says = append(says, s.content)
	}
	if strings.Join(says, "|") != "ra|rc|rb|rd|" {
		t.Errorf("dag says %q", says)
	}
}

func TestSimUserNoAtomic(t *testing.T) {
	task := &Task{ID: "z", Brief: "Just asking.", Identity: "I am Bo."}
	got := converse(t, mustUser(t, task, ViewSimUser, UserOptions{}))
	if len(got) != 2 || got[0] != (step{"Just asking.", false}) || !got[1].done {
		t.Errorf("simuser = %+v", got)
	}
}

func TestSimUserParaphrase(t *testing.T) {
	task := chain()
	task.Identity = "I am Ann."
	var mu sync.Mutex
	var seen []string
	para := func(ctx context.Context, req string) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, req)
		return strings.ToUpper(req) + "!", nil
	}
	got := converse(t, mustUser(t, task, ViewSimUser, UserOptions{Paraphrase: para}))
	if got[0].content != "I am Ann. R1!" || got[1].content != "R2!" || got[2].content != "R3!" || !got[3].done {
		t.Errorf("paraphrased = %+v", got)
	}
	if strings.Join(seen, ",") != "r1,r2,r3" {
		t.Errorf("paraphrase saw %q", seen)
	}
	boom := errors.New("model down")
	u := mustUser(t, task, ViewSimUser, UserOptions{Paraphrase: func(context.Context, string) (string, error) { return "", boom }})
	if _, _, err := u.Next(context.Background(), nil); !errors.Is(err, boom) {
		t.Errorf("err = %v", err)
	}
	// The agentic brief does not go through the hook.
	a := mustUser(t, task, ViewAgentic, UserOptions{Paraphrase: func(context.Context, string) (string, error) { return "", boom }})
	if c, _, err := a.Next(context.Background(), nil); err != nil || c != "Cancel things." {
		t.Errorf("agentic = %q, %v", c, err)
	}
}

func TestNewUserErrors(t *testing.T) {
	if _, err := NewUser(chain(), "oracle", UserOptions{}); !errors.Is(err, ErrUnknownView) {
		t.Errorf("unknown view: %v", err)
	}
	if _, err := NewUser(nil, ViewAgentic, UserOptions{}); err == nil {
		t.Error("nil task: no error")
	}
	bad := chain()
	bad.Atomic[0].After = []string{"a3"}
	if _, err := NewUser(bad, ViewSimUser, UserOptions{}); !errors.Is(err, ErrCycle) {
		t.Errorf("cyclic task: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := mustUser(t, chain(), ViewSimUser, UserOptions{}).Next(ctx, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestSimUserRetail: on every converted retail task the simulated user says
// the identity and one request per atomic task, then is done; concurrent
// episodes share one User.
func TestSimUserRetail(t *testing.T) {
	_, conv := convertRetail(t)
	var wg sync.WaitGroup
	for _, ct := range conv {
		u := mustUser(t, ct, ViewSimUser, UserOptions{})
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var toUser []string
				for k := 0; ; k++ {
					c, done, err := u.Next(context.Background(), toUser)
					if err != nil {
						t.Error(err)
						return
					}
					n := len(ct.Atomic)
					if n == 0 {
						n = 1
					}
					if done != (k == n) {
						t.Errorf("task %s turn %d: done = %v", ct.ID, k, done)
						return
					}
					if done {
						return
					}
					switch {
					case len(ct.Atomic) == 0 && c != ct.Brief,
						len(ct.Atomic) > 0 && k == 0 && c != ct.Identity+" "+ct.Atomic[0].Request,
						len(ct.Atomic) > 0 && k > 0 && c != ct.Atomic[k].Request:
						t.Errorf("task %s turn %d: %q", ct.ID, k, c)
					}
					toUser = append(toUser, "ok")
				}
			}()
		}
	}
	wg.Wait()
}
