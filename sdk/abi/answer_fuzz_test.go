package abi

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// answerSeeds are answers as modules write them and the unusual shapes the
// scanner leaves to encoding/json.
var answerSeeds = []string{
	`{"content":[{"type":"text","text":"{\"order_id\":\"#W1\",\"items\":[{\"price\":12.5}]}"}],"structuredContent":{"order_id":"#W1","items":[{"price":12.5}]}}`,
	`{"content":[{"type":"text","text":"Error: Order not found"}],"isError":true}`,
	`{"internalError":"boom","code":"sql"}`,
	`{"contents":[{"uri":"a://b","text":"x"}]}`,
	`{"description":"d","messages":[{"role":"user","content":{"type":"text","text":"hi"}}]}`,
	`{"content":[],"isError":false,"notFound":true}`,
	` {"content":[{"type":"text","text":"h\u00e9\n\t\\\/ \ud83d\ude00"}]} `,
	`{"Content":[{"type":"text","text":"x"}]}`,
	`{"content":null}`,
	`{"content":[1],"content":[2]}`,
	`{"content":[{"type":"text","text":"x"}]}}`,
	`{"content":[{"type":"text","text":"x"}]} x`,
	`{"isError":1}`,
	`{"code":"a\"b","internalError":"\u00e9"}`,
	`{"structuredContent":null}`,
	`{"content":[{"type":"text","text":"x","extra":1}],"other":{}}`,
	`{}`,
	`[]`,
	`{"content":[01]}`,
	"{\"content\":[{\"type\":\"text\",\"text\":\"\xff\"}]}",
}

// FuzzDecodeAnswer: whatever the answer scanner accepts, encoding/json
// accepts with the same Answer; everything else goes to encoding/json.
func FuzzDecodeAnswer(f *testing.F) {
	for _, s := range answerSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		orig := append([]byte(nil), data...)
		got, ok := decodeAnswerFast(data)
		want, err := decodeAnswerJSON(data)
		if ok {
			if err != nil {
				t.Fatalf("scanner accepted %q, encoding/json: %v", data, err)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("%q: scanner differs from encoding/json (-json +scanner):\n%s", data, d)
			}
			data[0] ^= 0xff // the answer must not alias the input
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("%q: answer aliases its input:\n%s", orig, d)
			}
		}
		full, ferr := DecodeAnswer(orig)
		if (ferr == nil) != (err == nil) || (err == nil && !cmp.Equal(full, want)) {
			t.Fatalf("%q: DecodeAnswer %v, %v; encoding/json %v, %v", orig, full, ferr, want, err)
		}
	})
}

// FuzzDecodeContent: DecodeContent is json.Unmarshal into a Content.
func FuzzDecodeContent(f *testing.F) {
	for _, s := range []string{
		`{"type":"text","text":"{\"a\":\"b\\\\c\",\"d\":[1,2]}"}`,
		`{"text":"\u00e9\u0000\/\b\f\n\r\t","type":"text"}`,
		`{"type":"text","text":"\ud83d\ude00 \udc00"}`,
		`{"type":"image","data":"AAAA","mimeType":"image/png"}`,
		`{"type":"text","Text":"x"}`,
		`{"type":"text","text":"a","text":"b"}`,
		`{"type":"text","text":null}`,
		`{"type":"text","text":"x"} `,
		`{}`,
		"{\"type\":\"text\",\"text\":\"\xc3\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := DecodeContent(data)
		var want Content
		werr := json.Unmarshal(data, &want)
		if (err == nil) != (werr == nil) {
			t.Fatalf("%q: DecodeContent error %v, encoding/json %v", data, err, werr)
		}
		if err == nil && !cmp.Equal(got, want) {
			t.Fatalf("%q: DecodeContent %+v, encoding/json %+v", data, got, want)
		}
		if c, ok := decodeTextContent(data); ok && !cmp.Equal(c, want) {
			t.Fatalf("%q: scanner %+v, encoding/json %+v", data, c, want)
		}
	})
}

// TestDecodeAnswerFastPath: the answers modules write take the scanner,
// and give the values encoding/json gives.
func TestDecodeAnswerFastPath(t *testing.T) {
	for _, s := range answerSeeds[:7] {
		got, ok := decodeAnswerFast([]byte(s))
		if !ok {
			t.Errorf("%s: not taken by the scanner", s)
			continue
		}
		want, err := decodeAnswerJSON([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s: (-json +scanner)\n%s", s, d)
		}
	}
	a, err := DecodeAnswer([]byte(answerSeeds[0]))
	if err != nil || len(a.Content) != 1 || string(a.StructuredContent) != `{"order_id":"#W1","items":[{"price":12.5}]}` {
		t.Fatalf("DecodeAnswer = %+v, %v", a, err)
	}
	c, err := DecodeContent(a.Content[0])
	if err != nil || c.Type != "text" || c.Text != `{"order_id":"#W1","items":[{"price":12.5}]}` {
		t.Fatalf("DecodeContent = %+v, %v", c, err)
	}
	for _, bad := range []string{`{"content":[1]} x`, `{"content":[01]}`, `{"isError":1}`, `[]`} {
		if _, err := DecodeAnswer([]byte(bad)); err == nil {
			t.Errorf("DecodeAnswer(%s) accepted", bad)
		}
	}
}
