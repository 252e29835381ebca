package host_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/weft-dev/weft/plugins/builtin"
	"github.com/weft-dev/weft/sdk/plugin"
	"github.com/weft-dev/weft/sdk/plugin/plugintest"
)

var update = flag.Bool("update", false, "rewrite the golden transcripts in testdata/")

// TestGoldenTranscripts records one tau2-retail episode (task 0) per
// built-in harness, run as its own process with the scripted policy over
// a retail session, as testdata/<harness>.txtar: for every turn the prompt
// exactly as the harness rendered it, the model's raw response, the parsed
// calls and the tool results, then the canonical trajectory. Refresh with
// `go test ./plugins/host -run Golden -update`.
func TestGoldenTranscripts(t *testing.T) {
	tasks, policy := retailTasks(t)
	srv := newServer(t)
	l := newLauncher(t)
	for _, name := range builtin.Names() {
		t.Run(name, func(t *testing.T) {
			h, err := l.Builtin(t.Context(), name)
			if err != nil {
				t.Fatal(err)
			}
			res, _ := runTask(t, srv, h, tasks[0], policy)
			if res.Failure != nil {
				t.Fatalf("failure: %v", res.Failure)
			}
			plugintest.Golden(t, filepath.Join("testdata", name+".txtar"), transcript(name, res.Trajectory), *update)
		})
	}
}

// transcript renders a trajectory (plugin protocol v2's weft.plugin.v2
// Trajectory) as a txtar archive: every field of each Turn but the
// wall-clock duration_ms (unsolved_set only when set), then the canonical
// messages. The system message is printed in full in the first turn only
// (later turns say whether it is unchanged), so the file grows linearly
// with the turns.
func transcript(name string, tr *plugin.Trajectory) *txtar.Archive {
	a := &txtar.Archive{Comment: []byte(fmt.Sprintf("harness %s, tau2-retail task 0, scripted policy without faults, plugin protocol weft.plugin.v2\ntermination: %s, turns: %d, tool calls: %d, format errors: %d\n",
		name, tr.Termination, len(tr.Turns), tr.ToolCalls, tr.FormatErrors))}
	add := func(n string, b []byte) { a.Files = append(a.Files, txtar.File{Name: n, Data: b}) }
	firstSystem := ""
	for _, turn := range tr.Turns {
		var p bytes.Buffer
		for i, m := range turn.Prompt {
			if i == 0 && m.Role == plugin.RoleSystem {
				if firstSystem == "" {
					firstSystem = m.Content
				} else if m.Content == firstSystem {
					p.WriteString("[system] (unchanged from turn 1)\n\n")
					continue
				}
			}
			writeMessage(&p, m)
		}
		pre := fmt.Sprintf("turn-%02d", turn.Index)
		add(pre+"/prompt", p.Bytes())
		var r bytes.Buffer
		writeMessage(&r, turn.Response)
		add(pre+"/response", r.Bytes())
		add(pre+"/calls.json", jsonLines(turn.Calls))
		if turn.FormatError != "" {
			add(pre+"/format_error", []byte(turn.FormatError+"\n"))
		}
		add(pre+"/results.json", jsonLines(turn.Results))
		if turn.UserReply != "" {
			add(pre+"/user_reply", []byte(turn.UserReply+"\n"))
		}
		if len(turn.UnsolvedSet) > 0 {
			add(pre+"/unsolved_set.json", jsonLine(turn.UnsolvedSet))
		}
	}
	var c bytes.Buffer
	for _, m := range tr.Messages {
		if m.Role == plugin.RoleSystem {
			m = &plugin.Message{Role: m.Role, Content: "(the system prompt of turn 1)"}
		}
		c.Write(jsonLine(m))
	}
	add("canonical.jsonl", c.Bytes())
	return a
}

func writeMessage(w *bytes.Buffer, m *plugin.Message) {
	if m == nil {
		w.WriteString("(none)\n")
		return
	}
	fmt.Fprintf(w, "[%s]", m.Role)
	if m.Name != "" {
		fmt.Fprintf(w, " name=%s", m.Name)
	}
	if m.ToolCallId != "" {
		fmt.Fprintf(w, " tool_call_id=%s", m.ToolCallId)
	}
	w.WriteString("\n")
	if m.ReasoningContent != "" {
		fmt.Fprintf(w, "(reasoning) %s\n", m.ReasoningContent)
	}
	if m.Content != "" {
		w.WriteString(strings.TrimRight(m.Content, "\n") + "\n")
	}
	for _, tc := range m.ToolCalls {
		fmt.Fprintf(w, "(tool_call %s) %s %s\n", tc.Id, tc.Name, tc.Arguments)
	}
	w.WriteString("\n")
}

// jsonLine encodes v as one line of JSON with the protocol's field names.
func jsonLine(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return append(b, '\n')
}

func jsonLines[T any](vs []T) []byte {
	var b []byte
	for _, v := range vs {
		b = append(b, jsonLine(v)...)
	}
	if b == nil {
		b = []byte("(none)\n")
	}
	return b
}
