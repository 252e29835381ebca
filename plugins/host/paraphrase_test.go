package host_test

import (
	"context"
	"strings"
	"testing"

	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/core/model/modeltest"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/plugins/host"
)

// TestModelParaphrase: the LLM-backed simulated user sends each atomic
// request through an OpenAI-compatible endpoint and says its answer; an
// endpoint failure is the user's error.
func TestModelParaphrase(t *testing.T) {
	tk := task30(t)
	srv := modeltest.NewServer(t, modeltest.WithHandler(func(r modeltest.Request) modeltest.Reply {
		msgs := r.Messages()
		last, _ := msgs[len(msgs)-1]["content"].(string)
		return modeltest.Text("PARAPHRASED: " + last)
	}))
	client, err := model.NewClient(model.ClientConfig{BaseURL: srv.URL(), Model: "m", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	u, err := task.NewUser(tk, task.ViewSimUser, task.UserOptions{Paraphrase: host.ModelParaphrase(client)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	open, done, err := u.Next(ctx, nil)
	if err != nil || done {
		t.Fatalf("opening: %q %v %v", open, done, err)
	}
	if want := "PARAPHRASED: " + tk.Atomic[0].Request; !strings.Contains(open, want) {
		t.Errorf("opening %q does not contain %q", open, want)
	}
	second, _, err := u.Next(ctx, []string{"done with the first"})
	if err != nil || second != "PARAPHRASED: "+tk.Atomic[1].Request {
		t.Errorf("second request %q, %v", second, err)
	}
	srv.Close()
	if _, _, err := u.Next(ctx, []string{"a", "b"}); err == nil || !strings.Contains(err.Error(), "simulated user") {
		t.Errorf("endpoint down: err = %v", err)
	}
}
