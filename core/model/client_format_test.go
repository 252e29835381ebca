package model_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/core/model/modeltest"
)

func TestResponseFormatJSONSchema(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.WithReplies(modeltest.Text(`{"answer": 42}`)))
	c, _ := newClient(t, srv, model.ClientConfig{})
	schema := `{"type":"object","properties":{"zeta":{"type":"string"},"answer":{"type":"integer"}},"required":["answer"]}`
	req := userReq("answer")
	req.ResponseFormat = &model.ResponseFormat{Name: "weft_answer", Description: "the answer", Schema: json.RawMessage(schema), Strict: true}
	resp, err := c.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != `{"answer": 42}` {
		t.Errorf("content = %q", resp.Message.Content)
	}
	body := srv.Requests()[0].Body
	want := map[string]any{"type": "json_schema", "json_schema": map[string]any{
		"name": "weft_answer", "description": "the answer", "strict": true, "schema": decode(t, schema)}}
	if diff := cmp.Diff(want, body["response_format"]); diff != "" {
		t.Errorf("response_format (-want +got):\n%s", diff)
	}
	if raw := string(srv.Requests()[0].Raw); !strings.Contains(raw, `"schema":`+schema) {
		t.Errorf("schema not sent byte for byte:\n%s", raw)
	}
}

func TestResponseFormatAbsentByDefault(t *testing.T) {
	srv := modeltest.NewServer(t)
	c, _ := newClient(t, srv, model.ClientConfig{})
	if _, err := c.Generate(context.Background(), userReq("hi")); err != nil {
		t.Fatal(err)
	}
	if _, ok := srv.Requests()[0].Body["response_format"]; ok {
		t.Errorf("response_format sent without being asked: %s", srv.Requests()[0].Raw)
	}
}

func TestResponseFormatRefusedBeforeSending(t *testing.T) {
	srv := modeltest.NewServer(t)
	c, _ := newClient(t, srv, model.ClientConfig{})
	for _, tt := range []struct {
		rf  model.ResponseFormat
		msg string
	}{
		{model.ResponseFormat{Name: "", Schema: json.RawMessage(`{}`)}, `name ""`},
		{model.ResponseFormat{Name: "has space", Schema: json.RawMessage(`{}`)}, `name "has space"`},
		{model.ResponseFormat{Name: "ok", Schema: json.RawMessage(`[1]`)}, "not a JSON object"},
		{model.ResponseFormat{Name: "ok"}, "not a JSON object"},
	} {
		req := userReq("x")
		req.ResponseFormat = &tt.rf
		_, err := c.Generate(context.Background(), req)
		var e *model.Error
		if !errors.As(err, &e) || e.Kind != model.KindBadRequest || !strings.Contains(e.Message, tt.msg) {
			t.Errorf("%+v: err = %v, want bad_request mentioning %q", tt.rf, err, tt.msg)
		}
	}
	if srv.Count() != 0 {
		t.Errorf("server saw %d requests, want 0", srv.Count())
	}
}
