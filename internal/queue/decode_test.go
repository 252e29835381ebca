package queue

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/weft-dev/weft/core/rollout"
	"github.com/weft-dev/weft/internal/pipeline"
)

func TestDecodeJob(t *testing.T) {
	good, _ := json.Marshal(JobMsg{V: Version, Run: Run{ID: "r1", Config: []byte("x"), File: "/a.hcl"}, Unit: pipeline.Unit{Stage: "grpo", Key: "t1"}})
	m, err := DecodeJob("weft.jobs.r1", good)
	if err != nil || m.Unit.Key != "t1" || string(m.Run.Config) != "x" {
		t.Fatalf("good job: %+v, %v", m, err)
	}
	for name, c := range map[string]struct{ subject, data, reason string }{
		"not json":      {"weft.jobs.r1", "{", "does not decode"},
		"unknown field": {"weft.jobs.r1", strings.Replace(string(good), `"v":1`, `"v":1,"x":2`, 1), "unknown field"},
		"version":       {"weft.jobs.r1", strings.Replace(string(good), `"v":1`, `"v":2`, 1), "version 2"},
		"other subject": {"weft.jobs.r2", string(good), "on subject weft.jobs.r2"},
		"bad run id":    {"weft.jobs.a.b", strings.Replace(string(good), `"id":"r1"`, `"id":"a.b"`, 1), "not a subject token"},
		"no config":     {"weft.jobs.r1", strings.Replace(string(good), `"config":"eA=="`, `"config":null`, 1), "no config"},
		"stage":         {"weft.jobs.r1", strings.Replace(string(good), `"grpo"`, `"train"`, 1), `unknown stage "train"`},
		"trailing":      {"weft.jobs.r1", string(good) + "{}", "trailing"},
	} {
		_, err := DecodeJob(c.subject, []byte(c.data))
		var me *MessageError
		if !errors.As(err, &me) || !errors.Is(err, ErrMalformed) || !strings.Contains(me.Reason, c.reason) || me.Subject != c.subject {
			t.Errorf("%s: err %v, want a *MessageError on %s saying %q", name, err, c.subject, c.reason)
		}
	}
}

func TestDecodeResult(t *testing.T) {
	score := 1.0
	good, _ := json.Marshal(ResultMsg{V: Version, Run: "r1", Worker: "w", Result: &pipeline.UnitResult{Stage: "rollout", Key: "k",
		Outcome: &rollout.Outcome{Key: "k", Score: &score}}})
	m, err := DecodeResult("weft.results.r1", good)
	if err != nil || *m.Result.Outcome.Score != 1 {
		t.Fatalf("good result: %+v, %v", m, err)
	}
	refusal, _ := json.Marshal(ResultMsg{V: Version, Run: "r1", Unit: &pipeline.Unit{Stage: "sft", Key: "t"},
		Refused: &rollout.InfraError{Component: "module", Kind: "no_such_module", Retryable: true}})
	if m, err := DecodeResult("weft.results.r1", refusal); err != nil || m.Refused.Code() != "module_no_such_module" {
		t.Fatalf("refusal: %+v, %v", m, err)
	}
	for name, c := range map[string]struct{ data, reason string }{
		"not json":     {"[]", "does not decode"},
		"neither":      {`{"v":1,"run":"r1","worker":"w"}`, "exactly one of result and refused"},
		"empty result": {`{"v":1,"run":"r1","worker":"w","result":{"stage":"rollout","key":"k"}}`, "0 of outcome"},
		"wrong key":    {strings.Replace(string(good), `"outcome":{"key":"k"`, `"outcome":{"key":"j"`, 1), `outcome of rollout job "j"`},
		"other run":    {strings.Replace(string(good), `"run":"r1"`, `"run":"r2"`, 1), "on subject"},
		"no unit":      {`{"v":1,"run":"r1","worker":"w","refused":{"kind":"x","message":"","retryable":true}}`, "names no unit"},
	} {
		_, err := DecodeResult("weft.results.r1", []byte(c.data))
		var me *MessageError
		if !errors.As(err, &me) || !strings.Contains(me.Reason, c.reason) {
			t.Errorf("%s: err %v, want a *MessageError saying %q", name, err, c.reason)
		}
	}
}

// FuzzDecode: no input makes the decoders panic, and whatever they accept
// is a usable job or result.
func FuzzDecode(f *testing.F) {
	good, _ := json.Marshal(JobMsg{V: Version, Run: Run{ID: "r1", Config: []byte("x")}, Unit: pipeline.Unit{Stage: "rollout", Key: "k"}})
	f.Add(good)
	f.Add([]byte(`{"v":1,"run":"r1","worker":"w","result":{"stage":"sft","key":"t","lines":[{"key":"prefix/t","value":{}}]}}`))
	f.Add([]byte("{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if m, err := DecodeJob("weft.jobs.r1", data); err == nil && (m.Run.ID != "r1" || m.Unit.Key == "") {
			t.Fatalf("accepted job %+v", m)
		}
		if m, err := DecodeResult("weft.results.r1", data); err == nil {
			if m.Result != nil {
				if err := m.Result.Check(); err != nil {
					t.Fatalf("accepted result %+v: %v", m, err)
				}
			} else if m.Refused == nil || m.Unit == nil {
				t.Fatalf("accepted message %+v", m)
			}
		}
	})
}
