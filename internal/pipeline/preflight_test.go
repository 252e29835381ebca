package pipeline

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/config"
	"github.com/weft-dev/weft/core/model/modeltest"
	"github.com/weft-dev/weft/megamcp/megamcptest"
)

// preflightConfig is a config over the committed retail tasks whose
// rollout uses endpoint policy "model" (base, model name, api_key_env),
// with a spare endpoint policy no stage uses (a closed port) and a
// verifier binary that is the test binary serving a harness.
func preflightConfig(t *testing.T, base, modelName, keyEnv string) *config.Config {
	t.Helper()
	key := ""
	if keyEnv != "" {
		key = fmt.Sprintf("\n    api_key_env = %q", keyEnv)
	}
	src := fmt.Sprintf(`module "retail" {
  path = "%[1]s/examples/modules/retail"
}
tasks "a" {
  weft  = ["%[1]s/examples/data/tau2-retail/tasks.weft.json"]
  limit = 2
}
policy "model" {
  endpoint {
    base_url = %[2]q
    model    = %[3]q%[4]s
  }
}
policy "spare" {
  endpoint {
    base_url = "http://127.0.0.1:1/v1"
    model    = "x"
  }
}
harness "native" {}
view "agentic" {}
verifier {
  binary = %[5]q
  args   = [%[6]q]
}
rollout {
  policy = "model"
}
pipeline {
  stages = ["import", "rollout"]
}
`, megamcptest.Root(), base, modelName, key, os.Args[0], serveNoResume)
	cfg, diags := config.Parse([]byte(src), filepath.Join(t.TempDir(), "pre.hcl"), config.LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return cfg
}

func preflightLines(t *testing.T, cfg *config.Config, getenv func(string) string) (steps []string, diags []string) {
	t.Helper()
	var seen []PreflightStep
	got, ds := Preflight(context.Background(), cfg, PreflightOptions{Getenv: getenv, Step: func(s PreflightStep) { seen = append(seen, s) }})
	if diff := cmp.Diff(seen, got); diff != "" {
		t.Errorf("steps given to Step differ from those returned (-step +returned):\n%s", diff)
	}
	for _, s := range got {
		steps = append(steps, fmt.Sprintf("%s %s %v", s.Check, s.Block, s.OK))
	}
	for _, d := range ds {
		f := config.FormatDiagnostic(d)
		diags = append(diags, f[strings.Index(f, "pre.hcl:"):])
	}
	return steps, diags
}

// Preflight's endpoint and plugin diagnostics point at the attribute to
// fix; the spare endpoint no stage uses is not probed.
func TestPreflightDiagnostics(t *testing.T) {
	wantSteps := []string{"tasks tasks true", `endpoint policy "model" false`, `harness harness "native" true`, "verifier verifier false"}
	verifierDiag := `pre.hcl:23:12: error: Plugin did not describe itself; The verifier ` + os.Args[0] +
		`: weft plugin verifier: protocol: rpc error: code = Unimplemented desc = unknown service weft.plugin.v2.Verifier.`

	t.Run("model not served", func(t *testing.T) {
		srv := modeltest.NewServer(t, modeltest.WithModels("served"), modeltest.WithReplies(modeltest.Status(404, "The model `typo` does not exist.")))
		steps, diags := preflightLines(t, preflightConfig(t, srv.URL(), "typo", ""), nil)
		if diff := cmp.Diff(wantSteps, steps); diff != "" {
			t.Errorf("steps (-want +got):\n%s", diff)
		}
		want := `pre.hcl:11:16: error: Model not served; Policy "model": model: ` + srv.URL() + `/chat/completions: bad_request (HTTP 404): model "typo" is not among the 1 models ` + srv.URL() + `/models lists ("served"), and a one-token request for it failed: The model ` + "`typo`" + ` does not exist.`
		if diff := cmp.Diff([]string{want, verifierDiag}, diags); diff != "" {
			t.Errorf("diagnostics (-want +got):\n%s", diff)
		}
	})

	t.Run("key refused", func(t *testing.T) {
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(401)
			w.Write([]byte(`{"error": {"message": "missing key"}}`))
		}))
		defer hs.Close()
		getenv := func(string) string { return "" }
		steps, diags := preflightLines(t, preflightConfig(t, hs.URL+"/v1", "m", "WEFT_TEST_KEY"), getenv)
		if diff := cmp.Diff(wantSteps, steps); diff != "" {
			t.Errorf("steps (-want +got):\n%s", diff)
		}
		want := `pre.hcl:12:19: error: Model endpoint refused the API key; Policy "model": model: ` + hs.URL + `/v1/models: bad_request (HTTP 401): missing key. api_key_env names WEFT_TEST_KEY, which is empty or unset in weft's environment.`
		// The api_key_env line moves the verifier block one line down.
		if diff := cmp.Diff([]string{want, strings.Replace(verifierDiag, "pre.hcl:23:", "pre.hcl:24:", 1)}, diags); diff != "" {
			t.Errorf("diagnostics (-want +got):\n%s", diff)
		}
	})
}
