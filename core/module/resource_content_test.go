package module

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// The everything module's tools: every content type, as the MCP
// conformance suite expects it, and its log and progress notifications.
func TestEverythingTools(t *testing.T) {
	m := everything(t)
	ctx := context.Background()
	var mu sync.Mutex
	var logs, progress []string
	s := &Session{Workspace: fxWorkspace(t),
		Log: func(level int, msg string) {
			mu.Lock()
			logs = append(logs, fmt.Sprintf("%d %s", level, msg))
			mu.Unlock()
		},
		Progress: func(p, total float64, msg string) {
			mu.Lock()
			progress = append(progress, fmt.Sprintf("%g/%g %s", p, total, msg))
			mu.Unlock()
		}}
	hash := s.Workspace.Hash()
	for i, tc := range []struct{ tool, args, want string }{
		{"test_simple_text", ``,
			`{"content":[{"type":"text","text":"This is a simple text response for testing."}]}`},
		{"test_image_content", `{}`,
			`{"content":[{"type":"image","data":"` + everythingPNG + `","mimeType":"image/png"}]}`},
		{"test_audio_content", `{}`,
			`{"content":[{"type":"audio","data":"` + everythingWAV + `","mimeType":"audio/wav"}]}`},
		{"test_embedded_resource", `{}`,
			`{"content":[{"type":"resource","resource":{"uri":"test://embedded-resource","mimeType":"text/plain","text":"This is an embedded resource content."}}]}`},
		{"test_multiple_content_types", `{}`,
			`{"content":[{"type":"text","text":"Multiple content types test:"},` +
				`{"type":"image","data":"` + everythingPNG + `","mimeType":"image/png"},` +
				`{"type":"resource","resource":{"uri":"test://mixed-content-resource","mimeType":"application/json","text":"{\"test\":\"data\",\"value\":123}"}}]}`},
		{"test_tool_with_logging", `{}`,
			`{"content":[{"type":"text","text":"Tool with logging executed successfully"}]}`},
		{"test_tool_with_progress", `{}`,
			`{"content":[{"type":"text","text":"Tool with progress executed successfully"}]}`},
		{"test_error_handling", `{}`,
			`{"content":[{"type":"text","text":"This tool intentionally returns an error for testing"}],"isError":true}`},
		{"test_reconnection", `{}`,
			`{"content":[{"type":"text","text":"Reconnection test completed successfully"}]}`},
		{"json_schema_2020_12_tool", `{"name":"Ada","address":{"street":"1 Main St","city":"<Springfield>"}}`,
			`{"content":[{"type":"text","text":"JSON Schema 2020-12 tool called with: {\"name\":\"Ada\",\"address\":{\"street\":\"1 Main St\",\"city\":\"<Springfield>\"}}"}]}`},
		{"json_schema_2020_12_tool", `{}`,
			`{"content":[{"type":"text","text":"JSON Schema 2020-12 tool called with: {}"}]}`},
	} {
		res, err := m.Call(ctx, s, tc.tool, json.RawMessage(tc.args))
		if err != nil {
			t.Fatalf("%s: %v", tc.tool, err)
		}
		var buf strings.Builder
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(res); err != nil {
			t.Fatal(err)
		}
		if b := strings.TrimSpace(buf.String()); b != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.tool, b, tc.want)
		}
		if s.Seq() != uint64(i+1) {
			t.Errorf("%s: Seq %d, want %d", tc.tool, s.Seq(), i+1)
		}
	}
	if want := "[1 Tool execution started 1 Tool processing data 1 Tool execution completed]"; fmt.Sprint(logs) != want {
		t.Errorf("logs %q\nwant %s", logs, want)
	}
	if want := "[0/100 Completed step 0 of 100 50/100 Completed step 50 of 100 100/100 Completed step 100 of 100]"; fmt.Sprint(progress) != want {
		t.Errorf("progress %q\nwant %s", progress, want)
	}
	if s.Workspace.Hash() != hash {
		t.Fatal("read-only tools changed the workspace")
	}

	// The media decode to what their mime types say.
	if png, _ := base64.StdEncoding.DecodeString(everythingPNG); !strings.HasPrefix(string(png), "\x89PNG\r\n\x1a\n") {
		t.Error("image is not a PNG")
	}
	if wav, _ := base64.StdEncoding.DecodeString(everythingWAV); len(wav) != 60 || string(wav[:4]) != "RIFF" || string(wav[8:12]) != "WAVE" {
		t.Error("audio is not a WAV")
	}

	// The 2020-12 schema is enforced by the host.
	for _, args := range []string{`{"nickname":"x"}`, `{"address":"Main St"}`, `{"address":{"city":5}}`} {
		_, err := m.Call(ctx, s, "json_schema_2020_12_tool", json.RawMessage(args))
		if !errors.Is(err, ErrInvalidArguments) {
			t.Errorf("%s: %v, want ErrInvalidArguments", args, err)
		}
	}
}
