package module

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// The fixture media of examples/modules/everything.
const (
	everythingPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR42mP4z8AAAAMBAQD3A0FDAAAAAElFTkSuQmCC"
	everythingWAV = "UklGRjQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YRAAAAAAAAAAAAAAAAAAAAAAAAAA"
)

// everything compiles examples/modules/everything.
func everything(t *testing.T) *Module {
	t.Helper()
	m, err := newRuntime(t, Config{}).Compile(context.Background(), fixturePkg(t, "../../examples/modules/everything"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestEverythingManifest(t *testing.T) {
	m := everything(t)
	man := m.Manifest()
	var tools []string
	for _, tl := range man.Tools {
		tools = append(tools, tl.Name)
		if tl.Description == "" {
			t.Errorf("tool %s has no description", tl.Name)
		}
	}
	if got, want := strings.Join(tools, " "), "test_simple_text test_image_content test_audio_content test_embedded_resource test_multiple_content_types test_tool_with_logging test_tool_with_progress test_error_handling test_reconnection json_schema_2020_12_tool"; got != want {
		t.Errorf("tools %s\nwant  %s", got, want)
	}
	res, _ := json.Marshal(man.Resources)
	if want := `[{"uri":"test://static-text","name":"static-text","title":"Static Text Resource","description":"A static text resource for testing","mimeType":"text/plain"},` +
		`{"uri":"test://static-binary","name":"static-binary","title":"Static Binary Resource","description":"A static binary resource (a 1x1 red PNG) for testing","mimeType":"image/png"}]`; string(res) != want {
		t.Errorf("resources %s\nwant      %s", res, want)
	}
	tmpl, _ := json.Marshal(man.ResourceTemplates)
	if want := `[{"uriTemplate":"test://template/{id}/data","name":"template","title":"Resource Template","description":"A resource template with parameter substitution","mimeType":"application/json"}]`; string(tmpl) != want {
		t.Errorf("templates %s\nwant      %s", tmpl, want)
	}
	prompts, _ := json.Marshal(man.Prompts)
	if want := `[{"name":"test_simple_prompt","title":"Simple Test Prompt","description":"A simple prompt without arguments"},` +
		`{"name":"test_prompt_with_arguments","title":"Prompt With Arguments","description":"A prompt with required arguments","arguments":[{"name":"arg1","description":"First test argument","required":true},{"name":"arg2","description":"Second test argument","required":true}]},` +
		`{"name":"test_prompt_with_embedded_resource","title":"Prompt With Embedded Resource","description":"A prompt that includes an embedded resource","arguments":[{"name":"resourceUri","description":"URI of the resource to embed","required":true}]},` +
		`{"name":"test_prompt_with_image","title":"Prompt With Image","description":"A prompt that includes image content"}]`; string(prompts) != want {
		t.Errorf("prompts %s\nwant    %s", prompts, want)
	}
	// SEP-1613: the 2020-12 keywords reach the manifest unchanged.
	for _, tl := range man.Tools {
		if tl.Name != "json_schema_2020_12_tool" {
			continue
		}
		var s map[string]any
		if err := json.Unmarshal(tl.InputSchema, &s); err != nil {
			t.Fatal(err)
		}
		defs, _ := s["$defs"].(map[string]any)
		if s["$schema"] != "https://json-schema.org/draft/2020-12/schema" || defs["address"] == nil || s["additionalProperties"] != false || s["type"] != "object" {
			t.Errorf("json_schema_2020_12_tool inputSchema %s", tl.InputSchema)
		}
	}
	if man.Tables.Owns == nil || len(man.Tables.Owns) != 0 || man.Export {
		t.Errorf("tables %+v export %v", man.Tables, man.Export)
	}
}

func TestEverythingReadResource(t *testing.T) {
	m := everything(t)
	ctx := context.Background()
	s := &Session{Workspace: fxWorkspace(t), Seed: 3}
	hash := s.Workspace.Hash()
	read := func(uri string) []ResourceContents {
		t.Helper()
		res, err := m.ReadResource(ctx, s, uri)
		if err != nil {
			t.Fatalf("%s: %v", uri, err)
		}
		if len(res.Denied) != 0 {
			t.Errorf("%s: denied %q", uri, res.Denied)
		}
		return res.Contents
	}
	check := func(uri string, want ...ResourceContents) {
		t.Helper()
		got := read(uri)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s:\n got %+v\nwant %+v", uri, got, want)
		}
	}
	check("test://static-text", ResourceContents{URI: "test://static-text", MimeType: "text/plain", Text: "This is the content of the static text resource."})
	check("test://static-binary", ResourceContents{URI: "test://static-binary", MimeType: "image/png", Blob: everythingPNG})
	check("test://template/123/data", ResourceContents{URI: "test://template/123/data", MimeType: "application/json", Text: `{"id":"123","templateTest":true,"data":"Data for ID: 123"}`})
	check("test://template/a%20%22b%22/data", ResourceContents{URI: "test://template/a%20%22b%22/data", MimeType: "application/json", Text: `{"id":"a \"b\"","templateTest":true,"data":"Data for ID: a \"b\""}`})

	png, err := base64.StdEncoding.DecodeString(read("test://static-binary")[0].Blob)
	if err != nil || !strings.HasPrefix(string(png), "\x89PNG\r\n\x1a\n") {
		t.Errorf("static-binary is not a PNG: %q %v", png, err)
	}
	// The JSON a client sees: text resource contents and blob ones.
	b, _ := json.Marshal(read("test://static-binary"))
	if want := `[{"uri":"test://static-binary","mimeType":"image/png","blob":"` + everythingPNG + `"}]`; string(b) != want {
		t.Errorf("blob contents JSON %s", b)
	}

	for _, uri := range []string{"test://nope", "test://template//data", "test://template/1/2/data", "test://static-text/", ""} {
		_, err := m.ReadResource(ctx, s, uri)
		if !errors.Is(err, ErrUnknownResource) {
			t.Errorf("%q: %v, want ErrUnknownResource", uri, err)
		}
	}
	if s.Seq() != 0 || s.Workspace.Hash() != hash {
		t.Fatalf("reads consumed sequence numbers (%d) or changed the workspace", s.Seq())
	}
	// A tool call in between: reads still leave Seq alone.
	if _, err := m.Call(ctx, s, "test_simple_text", nil); err != nil {
		t.Fatal(err)
	}
	read("test://template/7/data")
	if s.Seq() != 1 || s.Workspace.Hash() != hash {
		t.Fatalf("Seq %d after one call and reads", s.Seq())
	}
	if tpl, vars, err := m.MatchResource("test://template/x%2Fy/data"); err != nil || tpl != "test://template/{id}/data" || vars["id"] != "x/y" {
		t.Errorf("MatchResource: %q %v %v", tpl, vars, err)
	}
	if tpl, vars, err := m.MatchResource("test://static-text"); err != nil || tpl != "" || vars != nil {
		t.Errorf("MatchResource of a static resource: %q %v %v", tpl, vars, err)
	}
}

// roSource is a module whose resource and prompt handlers try what a
// read-only request must not do, and read the session's state.
const roSource = `package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	"github.com/weft-dev/weft/sdk/tool"
)

func init() {
	tool.Module(tool.Info{Name: "rofx", Version: "0.1.0", Owns: []string{"items"}, Reads: []string{"ro"}})
	tool.Register("put", "Inserts an item.", put)
	tool.Resource(tool.ResourceInfo{URI: "fx://count", Name: "count", MimeType: "text/plain"}, count)
	tool.Resource(tool.ResourceInfo{URI: "fx://write", Name: "write"}, write)
	tool.Resource(tool.ResourceInfo{URI: "fx://entropy", Name: "entropy"}, entropy)
	tool.Resource(tool.ResourceInfo{URI: "fx://say", Name: "say"}, say)
	tool.Resource(tool.ResourceInfo{URI: "fx://panic", Name: "panic"}, func(context.Context, string) ([]tool.ResourceContents, error) { panic("resource kaboom") })
	tool.Resource(tool.ResourceInfo{URI: "fx://loop", Name: "loop"}, loop)
	tool.ResourceTemplate(tool.TemplateInfo{URITemplate: "fx://items/{id}", Name: "item", MimeType: "application/json"}, itemRes)
	tool.ResourceTemplate(tool.TemplateInfo{URITemplate: "fx://fail/{why}", Name: "fail"}, fail)
	tool.Prompt(tool.PromptInfo{Name: "count", Description: "Counts the items."}, countPrompt)
	tool.Prompt(tool.PromptInfo{Name: "system_role"}, func(context.Context, map[string]string) ([]tool.PromptMessage, error) {
		return []tool.PromptMessage{{Role: "system", Content: tool.Text("x")}}, nil
	})
	tool.Prompt(tool.PromptInfo{Name: "refuse"}, func(context.Context, map[string]string) ([]tool.PromptMessage, error) {
		return nil, tool.Errorf("not today")
	})
}

func main() {}

type item struct {
	ID string ` + "`json:\"id\"`" + `
	N  int64  ` + "`json:\"n\"`" + `
}

func put(ctx context.Context, in item) (string, error) {
	_, err := tool.DB().ExecContext(ctx, "INSERT INTO items (id, n) VALUES (?, ?)", in.ID, in.N)
	return "ok", err
}

func items(ctx context.Context) (int64, error) {
	var n int64
	err := tool.DB().QueryRowContext(ctx, "SELECT COUNT(*) FROM items").Scan(&n)
	return n, err
}

func count(ctx context.Context, uri string) ([]tool.ResourceContents, error) {
	n, err := items(ctx)
	return []tool.ResourceContents{{Text: strconv.FormatInt(n, 10)}}, err
}

func write(ctx context.Context, uri string) ([]tool.ResourceContents, error) {
	_, err := tool.DB().ExecContext(ctx, "INSERT INTO items (id, n) VALUES ('w', 1)")
	n, cerr := items(ctx)
	if cerr != nil {
		return nil, cerr
	}
	return []tool.ResourceContents{{Text: fmt.Sprintf("%v; %d items", err, n)}}, nil
}

func entropy(ctx context.Context, uri string) ([]tool.ResourceContents, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	return []tool.ResourceContents{{Text: hex.EncodeToString(b[:]) + " " + time.Now().UTC().Format(time.RFC3339Nano)}}, nil
}

func say(ctx context.Context, uri string) ([]tool.ResourceContents, error) {
	tool.Log(2, "reading "+uri)
	tool.Progress(1, 1, "read")
	return []tool.ResourceContents{{Text: "said"}}, nil
}

func loop(ctx context.Context, uri string) ([]tool.ResourceContents, error) {
	for n := 0; ; n++ {
		if n < 0 {
			return nil, nil
		}
	}
}

func itemRes(ctx context.Context, uri string, vars map[string]string) ([]tool.ResourceContents, error) {
	var n int64
	if err := tool.DB().QueryRowContext(ctx, "SELECT n FROM items WHERE id = ?", vars["id"]).Scan(&n); err != nil {
		return nil, fmt.Errorf("no item %q: %w", vars["id"], tool.ErrNotFound)
	}
	return []tool.ResourceContents{{Text: fmt.Sprintf("{\"id\":%q,\"n\":%d}", vars["id"], n)}}, nil
}

func fail(ctx context.Context, uri string, vars map[string]string) ([]tool.ResourceContents, error) {
	return nil, fmt.Errorf("cannot read: %s", vars["why"])
}

func countPrompt(ctx context.Context, args map[string]string) ([]tool.PromptMessage, error) {
	n, err := items(ctx)
	return []tool.PromptMessage{{Role: "assistant", Content: tool.Text(fmt.Sprintf("%d items", n))}}, err
}
`

func rofx(t *testing.T, cfg Config) *Module {
	t.Helper()
	m, err := newRuntime(t, cfg).Compile(context.Background(), fixtureSource(t, "rofx", roSource))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func resourceText(t *testing.T, m *Module, s *Session, uri string) string {
	t.Helper()
	res, err := m.ReadResource(context.Background(), s, uri)
	if err != nil {
		t.Fatalf("%s: %v", uri, err)
	}
	if len(res.Contents) != 1 {
		t.Fatalf("%s: %+v", uri, res)
	}
	return res.Contents[0].Text
}

// A read is read-only whatever its handler does: writes are refused (and
// reported), the unit is rolled back, Seq does not move.
func TestReadResourceIsReadOnly(t *testing.T) {
	m := rofx(t, Config{})
	ctx := context.Background()
	s := &Session{Workspace: fxWorkspace(t), Seed: 9}
	if _, err := m.Call(ctx, s, "put", json.RawMessage(`{"id":"a","n":5}`)); err != nil {
		t.Fatal(err)
	}
	hash, seq := s.Workspace.Hash(), s.Seq()

	if got := resourceText(t, m, s, "fx://count"); got != "1" {
		t.Fatalf("count = %s: a read must see the session's state", got)
	}
	res, err := m.ReadResource(ctx, s, "fx://write")
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Contents[0].Text; got != `sql denied: denied: table "items" is read-only for this module; 1 items` {
		t.Errorf("write in a read: %q", got)
	}
	if len(res.Denied) != 1 || res.Denied[0] != "INSERT INTO items (id, n) VALUES ('w', 1)" {
		t.Errorf("denied %q", res.Denied)
	}
	if got := resourceText(t, m, s, "fx://items/a"); got != `{"id":"a","n":5}` {
		t.Errorf("template read %q", got)
	}
	if s.Workspace.Hash() != hash || s.Seq() != seq {
		t.Fatalf("a read changed the workspace or Seq (%d, want %d)", s.Seq(), seq)
	}
	// The default mime type is the declared one.
	if res, _ := m.ReadResource(ctx, s, "fx://items/a"); res.Contents[0].MimeType != "application/json" || res.Contents[0].URI != "fx://items/a" {
		t.Errorf("template contents %+v", res.Contents[0])
	}
	p, err := m.GetPrompt(ctx, s, "count", nil)
	if err != nil || p.Description != "Counts the items." || len(p.Messages) != 1 || p.Messages[0].Role != "assistant" || p.Messages[0].Content.Text != "1 items" {
		t.Fatalf("prompt: %+v %v", p, err)
	}
}

func TestReadResourceErrors(t *testing.T) {
	m := rofx(t, Config{CallTimeout: 300 * time.Millisecond})
	ctx := context.Background()
	s := &Session{Workspace: fxWorkspace(t)}
	hash := s.Workspace.Hash()

	// The handler's answers: not found, and a refusal.
	_, err := m.ReadResource(ctx, s, "fx://items/zz")
	var re *RefusedError
	if !errors.As(err, &re) || !errors.Is(err, ErrUnknownResource) || !errors.Is(err, ErrRefused) || !re.NotFound ||
		re.Message != `no item "zz": resource not found` || re.Target != "fx://items/zz" || re.Request != ResourceReadRequest {
		t.Errorf("missing item: %#v", err)
	}
	_, err = m.ReadResource(ctx, s, "fx://fail/disk%20full")
	if !errors.As(err, &re) || errors.Is(err, ErrUnknownResource) || re.Message != "cannot read: disk full" {
		t.Errorf("refusal: %v", err)
	}
	if err.Error() != "resource fx://fail/disk%20full: refused by the module: cannot read: disk full" {
		t.Errorf("refusal text: %s", err)
	}
	idle := m.Idle()
	if idle == 0 {
		t.Fatal("refusals discarded the instance")
	}

	// Infrastructure failures classify like Call's.
	_, err = m.ReadResource(ctx, s, "fx://panic")
	var ce *CallError
	if !errors.As(err, &ce) || !errors.Is(err, ErrTrap) || !strings.Contains(ce.Message, "resource kaboom") || ce.Tool != "weft.resource.read fx://panic" {
		t.Errorf("panic: %v", err)
	}
	_, err = m.ReadResource(ctx, s, "fx://loop")
	if !errors.Is(err, ErrDeadline) {
		t.Errorf("loop: %v", err)
	}
	resourceText(t, m, s, "fx://count") // a warm instance again
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err = m.ReadResource(cctx, s, "fx://count"); !errors.Is(err, ErrCanceled) {
		t.Errorf("canceled: %v", err)
	}
	_, err = m.GetPrompt(ctx, s, "system_role", nil)
	if !errors.Is(err, ErrMalformedOutput) || !strings.Contains(err.Error(), `messages[0]: role "system"`) {
		t.Errorf("bad role: %v", err)
	}
	_, err = m.GetPrompt(ctx, s, "refuse", nil)
	if !errors.As(err, &re) || re.Message != "not today" || re.Request != PromptGetRequest || errors.Is(err, ErrUnknownResource) {
		t.Errorf("prompt refusal: %v", err)
	}
	// Call cannot reach the reserved requests.
	for _, name := range []string{ResourceReadRequest, PromptGetRequest} {
		if _, err := m.Call(ctx, s, name, json.RawMessage(`{"uri":"fx://count"}`)); !errors.Is(err, ErrUnknownTool) {
			t.Errorf("Call(%s): %v", name, err)
		}
	}
	if s.Workspace.Hash() != hash || s.Seq() != 0 {
		t.Fatalf("failed reads changed the workspace or Seq %d", s.Seq())
	}
	// The session still works.
	if got := resourceText(t, m, s, "fx://count"); got != "0" {
		t.Fatalf("count after failures: %s", got)
	}
	if _, err := m.ReadResource(ctx, &Session{}, "fx://count"); err == nil || !strings.Contains(err.Error(), "needs a Session with a Workspace") {
		t.Errorf("no workspace: %v", err)
	}
}

// A read's randomness is the stream RandStream(seed, 1<<63|Seq()) and its
// clock the session's: reads between two calls see the same bytes, and a
// call moves them on.
func TestReadResourceDeterminism(t *testing.T) {
	m := rofx(t, Config{})
	ctx := context.Background()
	clock := NewVirtualClock(time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC))
	s := &Session{Workspace: fxWorkspace(t), Seed: 42, Clock: clock}
	want := func(seq uint64) string {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], RandStream(42, 1<<63|seq).Uint64())
		return fmt.Sprintf("%x 2024-05-06T07:08:09Z", b)
	}
	r1 := resourceText(t, m, s, "fx://entropy")
	r2 := resourceText(t, m, s, "fx://entropy")
	if r1 != r2 || r1 != want(0) {
		t.Fatalf("reads at Seq 0: %q %q, want %q", r1, r2, want(0))
	}
	if _, err := m.Call(ctx, s, "put", json.RawMessage(`{"id":"a","n":1}`)); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	if r3 := resourceText(t, m, s, "fx://entropy"); r3 != strings.Replace(want(1), ":09Z", ":10Z", 1) {
		t.Fatalf("read at Seq 1: %q, want %q", r3, want(1))
	}
	// Another session with the same seed reads the same bytes.
	s2 := &Session{Workspace: fxWorkspace(t), Seed: 42, Clock: NewVirtualClock(time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC))}
	if got := resourceText(t, m, s2, "fx://entropy"); got != r1 {
		t.Fatalf("same seed, other session: %q, want %q", got, r1)
	}
}

func TestReadResourceLogAndProgress(t *testing.T) {
	m := rofx(t, Config{})
	var mu sync.Mutex
	var got []string
	s := &Session{Workspace: fxWorkspace(t),
		Log: func(level int, msg string) {
			mu.Lock()
			got = append(got, fmt.Sprintf("%d %s", level, msg))
			mu.Unlock()
		},
		Progress: func(p, total float64, msg string) {
			mu.Lock()
			got = append(got, fmt.Sprintf("progress %g/%g %s", p, total, msg))
			mu.Unlock()
		}}
	if txt := resourceText(t, m, s, "fx://say"); txt != "said" {
		t.Fatal(txt)
	}
	if want := "[2 reading fx://say progress 1/1 read]"; fmt.Sprint(got) != want {
		t.Fatalf("got %q, want %s", got, want)
	}
}
