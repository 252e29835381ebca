package abi_test

import (
	"encoding/json"
	"fmt"

	"github.com/weft-dev/weft/sdk/abi"
)

// A manifest as a module returns it from weft_v1_manifest.
func ExampleManifest() {
	m := abi.Manifest{
		ABI:     abi.Version,
		Name:    "notes",
		Version: "1.0.0",
		Tools: []abi.Tool{{
			Name:        "add_note",
			Description: "Adds a note.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
		}},
		Tables: abi.Tables{Owns: []string{"notes"}},
		Hosts:  abi.HostVersions(),
	}
	b, _ := abi.Marshal(m)
	fmt.Println(string(b))
	// Output:
	// {"abi":"weft/v1","name":"notes","version":"1.0.0","tools":[{"name":"add_note","description":"Adds a note.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}}],"tables":{"owns":["notes"]},"hosts":{"clock":"v1","log":"v1","rand":"v1","sql":"v1"},"export":false}
}

// A tool result with text and an image, and the error envelopes.
func ExampleCallResult() {
	ok := abi.CallResult{Content: []abi.Content{
		abi.Text(`{"id":1}`),
		{Type: abi.ContentImage, Data: "iVBORw0KGgo=", MimeType: "image/png"},
	}, StructuredContent: json.RawMessage(`{"id":1}`)}
	toolErr := abi.CallResult{Content: []abi.Content{abi.Text("no such order")}, IsError: true}
	for _, v := range []any{ok, toolErr, abi.NewRefusal("no item 7", true), abi.InternalError{Message: "panic: oops"}} {
		b, _ := abi.Marshal(v)
		fmt.Println(string(b))
	}
	// Output:
	// {"content":[{"type":"text","text":"{\"id\":1}"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}],"structuredContent":{"id":1}}
	// {"content":[{"type":"text","text":"no such order"}],"isError":true}
	// {"content":[{"type":"text","text":"no item 7"}],"isError":true,"notFound":true}
	// {"internalError":"panic: oops"}
}

// A host decodes any answer with DecodeAnswer and checks each item.
func ExampleDecodeAnswer() {
	ans, err := abi.DecodeAnswer([]byte(`{"content":[{"type":"image","mimeType":"image/png"}]}`))
	if err != nil {
		panic(err)
	}
	var c abi.Content
	_ = json.Unmarshal(ans.Content[0], &c)
	fmt.Println(c.Check())
	// Output:
	// image needs data and mimeType
}

// A weft_sql_v1 round trip: the request a guest sends, the response the host
// writes (cells are Go values) and the guest decodes (cells are raw JSON).
func ExampleSQLResponse() {
	req, _ := abi.Marshal(abi.SQLRequest{
		SQL:  "SELECT name, balance FROM accounts WHERE id = ? AND opened < ?",
		Args: []json.RawMessage{json.RawMessage(`7`), json.RawMessage(`{"t":"time","v":"2025-01-01T00:00:00Z"}`)},
	})
	fmt.Println(string(req))

	host, _ := abi.Marshal(abi.SQLResponse[any]{
		Columns: []string{"name", "balance"}, Types: []string{abi.TypeString, abi.TypeDecimal},
		Rows: [][]any{{"Ada", "12.30"}},
	})
	fmt.Println(string(host))

	resp, _ := abi.DecodeSQLResponse(host)
	name, _ := abi.CellString(resp.Rows[0][0])
	fmt.Println(name, string(resp.Rows[0][1]), resp.Error == nil)

	failed, _ := abi.DecodeSQLResponse([]byte(`{"columns":[],"types":[],"rows":[],"rows_affected":0,"last_insert_id":0,"error":{"kind":"denied","message":"table secrets is not declared"}}`))
	fmt.Println(failed.Error)
	// Output:
	// {"sql":"SELECT name, balance FROM accounts WHERE id = ? AND opened < ?","args":[7,{"t":"time","v":"2025-01-01T00:00:00Z"}]}
	// {"columns":["name","balance"],"types":["string","decimal"],"rows":[["Ada","12.30"]],"rows_affected":0,"last_insert_id":0,"error":null}
	// Ada "12.30" true
	// sql denied: table secrets is not declared
}
