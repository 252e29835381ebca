package megamcp

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"

	"github.com/weft-dev/weft/sdk/abi"
)

var callBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// writeCallResult writes res as POST /v1/sessions/{id}/calls answers it:
// the bytes writeJSON(w, 200, res) writes (json.Encoder, HTML not escaped,
// a final newline), without encoding/json's reflection over the result
// and the second pass it makes over each content item's own encoding.
// Results it does not write directly (a content item other than text, no
// content list) go through writeJSON.
func writeCallResult(w http.ResponseWriter, res *CallResult) {
	buf := callBufs.Get().(*bytes.Buffer)
	buf.Reset()
	defer func() {
		if buf.Cap() <= 1<<20 {
			callBufs.Put(buf)
		}
	}()
	if !appendCallResult(buf, res) {
		writeJSON(w, http.StatusOK, res)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
}

// appendCallResult appends res's JSON answer to buf and reports whether it
// could (false: buf is to be discarded and writeJSON used).
func appendCallResult(buf *bytes.Buffer, res *CallResult) bool {
	r := res.Result
	if r == nil || r.Content == nil {
		return false
	}
	buf.WriteString(`{"result":{"content":[`)
	for i, c := range r.Content {
		if c.Type != abi.ContentText {
			return false
		}
		if i > 0 {
			buf.WriteByte(',')
		}
		// A text item is written with its type and text only
		// (abi.Content.MarshalJSON).
		// abi.AppendJSONString without HTML escaping writes what
		// writeJSON's json.Encoder (SetEscapeHTML(false)) writes.
		buf.WriteString(`{"type":"text","text":`)
		buf.Write(abi.AppendJSONString(buf.AvailableBuffer(), c.Text, false))
		buf.WriteByte('}')
	}
	buf.WriteByte(']')
	if len(r.StructuredContent) > 0 {
		buf.WriteString(`,"structuredContent":`)
		if err := json.Compact(buf, r.StructuredContent); err != nil {
			return false
		}
	}
	if r.IsError {
		buf.WriteString(`,"isError":true`)
	}
	b := buf.AvailableBuffer()
	b = append(b, `},"seq":`...)
	b = strconv.AppendUint(b, res.Seq, 10)
	b = append(b, `,"generation":`...)
	b = strconv.AppendUint(b, res.Generation, 10)
	b = append(b, `,"index":`...)
	b = strconv.AppendUint(b, res.Index, 10)
	b = append(b, `,"rows_changed":`...)
	b = strconv.AppendInt(b, int64(res.RowsChanged), 10)
	b = append(b, "}\n"...)
	buf.Write(b)
	return true
}
