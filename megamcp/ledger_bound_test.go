package megamcp

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"strings"
	"testing"
	"time"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/sdk/abi"
)

// boundRecords are records whose strings escape at every length JSON
// allows: plain, HTML-escaped (<, >, & become \u003c), control bytes
// (\u0001), invalid UTF-8 (\ufffd), embedded resources and errors.
func boundRecords() []*Record {
	worst := strings.Repeat("<\x01\xff&\"\\\n", 40)
	return []*Record{
		{Index: 7, Session: "s", Kind: KindCall, Tool: "t", Arguments: json.RawMessage(`{"a":"<&>"}`), Time: time.Unix(1, 2).UTC()},
		{Index: 1 << 62, Session: worst, Kind: KindCall, Module: worst, Tool: worst, Exposed: worst, Arguments: json.RawMessage(`{"x":"` + strings.Repeat("<>&", 100) + `"}`),
			Result: &module.Result{CallResult: abi.CallResult{IsError: true, StructuredContent: json.RawMessage(`{"k":"<<<"}`), Content: []module.Content{
				abi.Text(worst), {Type: "image", Data: worst, MimeType: worst},
				{Type: "resource_link", URI: worst, Name: worst},
				{Type: "resource", Resource: &abi.ResourceContents{URI: worst, MimeType: worst, Text: worst, Blob: worst}},
			}}},
			Error: &ErrorInfo{Kind: worst, Message: worst}, RowsChanged: -1 << 40, DurationMs: -1.5e300, Clock: -1 << 62, Version: worst, Time: time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.FixedZone("x", -13*3600))},
	}
}

// recordBound is an upper bound of the encoded record (the in-memory
// ledger skips the encoding below it), and encodeFrame writes the frame
// json.Marshal's payload gave before.
func TestRecordBoundAndFrame(t *testing.T) {
	for i, rec := range boundRecords() {
		want, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		if b := recordBound(rec); len(want) > b {
			t.Errorf("record %d: %d bytes encoded, over its bound %d", i, len(want), b)
		}
		frame, err := encodeFrame(rec)
		if err != nil {
			t.Fatal(err)
		}
		if n := binary.LittleEndian.Uint32(frame[:4]); int(n) != len(want) || !bytes.Equal(frame[8:], want) {
			t.Errorf("record %d: frame payload (length field %d) differs from json.Marshal's %d bytes", i, n, len(want))
		}
		if c := binary.LittleEndian.Uint32(frame[4:8]); c != crc32.Checksum(want, crcTable) {
			t.Errorf("record %d: frame CRC %x, want %x", i, c, crc32.Checksum(want, crcTable))
		}
	}
}

// An in-memory ledger refuses a record over the frame limit, as a ledger
// on disk does, and keeps what it held.
func TestMemLedgerRefusesOverFrame(t *testing.T) {
	w := newMemWAL()
	if err := w.append(&Record{Index: 0, Kind: KindCall, Tool: "t"}); err != nil {
		t.Fatal(err)
	}
	// 11 MiB of '<' encode to 66 MiB (\u003c each): over the 64 MiB frame.
	big := &Record{Index: 1, Kind: KindCall, Tool: "t", Result: &module.Result{CallResult: abi.CallResult{Content: []module.Content{abi.Text(strings.Repeat("<", 11<<20))}}}}
	err := w.append(big)
	if err == nil || !strings.Contains(err.Error(), "exceeds the 67108864-byte frame limit") {
		t.Fatalf("append of a 66 MiB record: %v, want the frame-limit error", err)
	}
	recs, err := w.read(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Index != 0 || w.n != 1 {
		t.Fatalf("after the refusal: %d records (n=%d), want the 1 held before", len(recs), w.n)
	}
	// Under the limit the next index is still free.
	if err := w.append(&Record{Index: 1, Kind: KindCall, Tool: "t"}); err != nil {
		t.Fatalf("append after the refusal: %v", err)
	}
}
