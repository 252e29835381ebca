package synth_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/core/model/modeltest"
	"github.com/weft-dev/weft/core/synth"
	"github.com/weft-dev/weft/sdk/spec"
)

func libraryJSON(t *testing.T, edit func(*spec.Server)) string {
	t.Helper()
	s, err := spec.Load("testdata/library")
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(s)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func endpointOn(t *testing.T, srv *modeltest.Server) *synth.Endpoint {
	t.Helper()
	c, err := model.NewClient(model.ClientConfig{BaseURL: srv.URL(), Model: "synth-model", MaxRetries: -1, InitialBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return &synth.Endpoint{Model: c, Infer: func(d synth.Docs) string { return "CREATE TABLE members (id VARCHAR(32) PRIMARY KEY)" }}
}

// TestEndpointRevision: round 0's answer selects a wrong column; the
// revision prompt carries the typed finding with its failing call; round
// 1's answer passes.
func TestEndpointRevision(t *testing.T) {
	wrong := libraryJSON(t, func(s *spec.Server) {
		s.Program = strings.Replace(s.Program, "SELECT id, title, copies FROM books", "SELECT id, titel, copies FROM books", 1)
	})
	srv := modeltest.NewServer(t, modeltest.WithReplies(modeltest.Text(wrong), modeltest.Text("```json\n"+libraryJSON(t, nil)+"\n```")))
	ep := endpointOn(t, srv)
	got, rep, err := synth.Revise(context.Background(), ep, libraryDocs(t, "library"), synth.ReviseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Passed || len(rep.Rounds) != 2 || rep.Rounds[0].FirstFailed != synth.StageNormal || got.Source.Synthesizer != "endpoint" {
		t.Fatalf("passed %v, rounds %+v", rep.Passed, rep.Rounds)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	rf, _ := reqs[0].Body["response_format"].(map[string]any)
	js, _ := rf["json_schema"].(map[string]any)
	var wantSchema any
	if err := json.Unmarshal([]byte(synth.ServerSchema), &wantSchema); err != nil {
		t.Fatal(err)
	}
	if rf["type"] != "json_schema" || js["name"] != "weft_server" || !cmp.Equal(js["schema"], wantSchema) {
		t.Errorf("response_format = %v", rf)
	}
	first := reqs[0].Messages()
	if len(first) != 2 || first[0]["role"] != "system" || !strings.Contains(first[1]["content"].(string), `"name": "borrow_book"`) ||
		!strings.Contains(first[1]["content"].(string), "CREATE TABLE members (id VARCHAR(32) PRIMARY KEY)") {
		t.Errorf("round 0 prompt lacks the docs or the inferred schema: %v", first)
	}
	second := reqs[1].Messages()
	if len(second) != 3 {
		t.Fatalf("round 1 has %d messages, want 3", len(second))
	}
	rev := second[2]["content"].(string)
	for _, want := range []string{"Revision round 1", "[normal/call_failed] tool get_book field program", `call: {"name":"get_book","arguments":{"book_id":"b1"}`, "titel", `"name":"library"`} {
		if !strings.Contains(rev, want) {
			t.Errorf("revision prompt lacks %q:\n%s", want, rev)
		}
	}
}

// TestEndpointMalformedAnswer: an answer that is not a server is a clear
// *AnswerError; Revise feeds it back and, when every round is malformed,
// ends with ErrNoServer and no server.
func TestEndpointMalformedAnswer(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.WithHandler(func(modeltest.Request) modeltest.Reply {
		return modeltest.Text(`{"format": "weft.server/v1", "name": "library", "tools": [`)
	}))
	ep := endpointOn(t, srv)
	_, err := ep.Synthesize(context.Background(), &synth.Request{Docs: libraryDocs(t, "library")})
	var ae *synth.AnswerError
	if !errors.As(err, &ae) || ae.Round != 0 || ae.Synthesizer != "endpoint" || !strings.Contains(err.Error(), "not a weft.server/v1 server") || !strings.Contains(err.Error(), `answer begins "{\"format\"`) {
		t.Fatalf("err = %v, want an AnswerError quoting the answer", err)
	}
	s, rep, err := synth.Revise(context.Background(), ep, libraryDocs(t, "library"), synth.ReviseOptions{})
	if s != nil || !errors.Is(err, synth.ErrNoServer) {
		t.Fatalf("Revise = %v, %v; want no server and ErrNoServer", s, err)
	}
	// Round 1 brought no improvement (still no server): revision stopped.
	if len(rep.Rounds) != 2 || rep.Passed || rep.Findings[0].Code != synth.CodeSpecInvalid || rep.Findings[0].Field != "answer" {
		t.Errorf("report: %+v", rep)
	}
	if got := srv.Requests()[2].Messages(); !strings.Contains(got[2]["content"].(string), "previous answer was not a usable server") {
		t.Errorf("revision prompt after a malformed answer: %v", got[2])
	}
	for _, tt := range []struct{ reply modeltest.Reply }{
		{modeltest.Reply{Content: libraryJSON(t, nil), FinishReason: "length"}},
		{modeltest.Text("")},
	} {
		srv := modeltest.NewServer(t, modeltest.WithReplies(tt.reply))
		if _, err := endpointOn(t, srv).Synthesize(context.Background(), &synth.Request{Docs: libraryDocs(t, "x")}); !errors.As(err, &ae) {
			t.Errorf("reply %+v: err = %v, want an AnswerError", tt.reply.FinishReason, err)
		}
	}
}

// TestEndpointFailureEndsRevision: an endpoint error (HTTP 400) is not an
// answer: Revise returns it at once.
func TestEndpointFailureEndsRevision(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.WithReplies(modeltest.Status(400, "context length exceeded")))
	_, _, err := synth.Revise(context.Background(), endpointOn(t, srv), libraryDocs(t, "library"), synth.ReviseOptions{})
	var me *model.Error
	if !errors.As(err, &me) || me.Kind != model.KindBadRequest || !strings.Contains(err.Error(), "context length exceeded") || srv.Count() != 1 {
		t.Fatalf("err = %v after %d requests; want the model's bad_request after 1", err, srv.Count())
	}
}
