package model_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/core/model/modeltest"
)

func probe(t *testing.T, baseURL, modelName, key string) (*model.ProbeResult, *model.Error) {
	t.Helper()
	c, err := model.NewClient(model.ClientConfig{BaseURL: baseURL, Model: modelName, APIKey: key})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Probe(context.Background())
	if err == nil {
		return res, nil
	}
	var me *model.Error
	if !errors.As(err, &me) {
		t.Fatalf("Probe error %v (%T) is not a *model.Error", err, err)
	}
	return res, me
}

// The models list names the model: one GET, no generation.
func TestProbeListed(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.WithModels("a", "test-model"))
	res, perr := probe(t, srv.URL(), "test-model", "")
	if perr != nil {
		t.Fatal(perr)
	}
	want := &model.ProbeResult{ModelsURL: srv.URL() + "/models", Models: []string{"a", "test-model"}, Listed: true}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	if srv.Count() != 0 {
		t.Errorf("%d chat requests, want 0", srv.Count())
	}
}

// A model the list does not name is tried with one token: a proxy may
// serve aliases it does not list.
func TestProbeUnlistedAnswers(t *testing.T) {
	srv := modeltest.NewServer(t)
	res, perr := probe(t, srv.URL(), "alias", "")
	if perr != nil {
		t.Fatal(perr)
	}
	if !res.Generated || res.Listed || !cmp.Equal(res.Models, []string{modeltest.DefaultModel}) {
		t.Errorf("result %+v, want generated, not listed, models [%s]", res, modeltest.DefaultModel)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Body["model"] != "alias" || (reqs[0].Body["max_tokens"] != 1.0 && reqs[0].Body["max_completion_tokens"] != 1.0) {
		t.Errorf("requests %+v, want one of at most 1 token for alias", reqs)
	}
}

// Unlisted and refused: the error names what the endpoint serves.
func TestProbeUnlistedRefused(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.WithModels("served-model"),
		modeltest.WithReplies(modeltest.Status(404, "The model `typo` does not exist.")))
	_, perr := probe(t, srv.URL(), "typo", "")
	if perr == nil || perr.Kind != model.KindBadRequest || perr.StatusCode != 404 {
		t.Fatalf("error %v, want bad_request (HTTP 404)", perr)
	}
	want := `model "typo" is not among the 1 models ` + srv.URL() + `/models lists ("served-model"), and a one-token request for it failed: The model ` + "`typo`" + ` does not exist.`
	if perr.Message != want {
		t.Errorf("message\n%q\nwant\n%q", perr.Message, want)
	}
}

// A base URL without /v1: the 404 says so at once.
func TestProbeNoVersionPath(t *testing.T) {
	srv := modeltest.NewServer(t)
	base := strings.TrimSuffix(srv.URL(), "/v1")
	_, perr := probe(t, base, "m", "")
	if perr == nil || perr.Kind != model.KindBadRequest || perr.StatusCode != 404 {
		t.Fatalf("error %v, want bad_request (HTTP 404)", perr)
	}
	want := `model: ` + base + `/models: bad_request (HTTP 404): base_url "` + base + `" has no version path: the client posts to ` + base + `/chat/completions; OpenAI-compatible servers serve it under /v1 (try "` + base + `/v1")`
	if perr.Error() != want {
		t.Errorf("error\n%s\nwant\n%s", perr.Error(), want)
	}
	if srv.Count() != 0 {
		t.Errorf("%d chat requests, want 0", srv.Count())
	}
}

func TestProbeUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + l.Addr().String() + "/v1"
	l.Close()
	_, perr := probe(t, base, "m", "")
	if perr == nil || perr.Kind != model.KindUnavailable || !strings.Contains(perr.Error(), "connection refused") {
		t.Fatalf("error %v, want unavailable: connection refused", perr)
	}
}

// The key goes with the models request; a refusal is bad_request with the
// server's message.
func TestProbeKeyRefused(t *testing.T) {
	var got string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(401)
		w.Write([]byte(`{"error":{"message":"Incorrect API key provided"}}`))
	}))
	defer hs.Close()
	_, perr := probe(t, hs.URL+"/v1", "m", "sk-wrong")
	if got != "Bearer sk-wrong" {
		t.Errorf("Authorization %q", got)
	}
	if perr == nil || perr.Kind != model.KindBadRequest || perr.StatusCode != 401 || perr.Message != "Incorrect API key provided" {
		t.Fatalf("error %v, want bad_request (HTTP 401): Incorrect API key provided", perr)
	}
}
