package megamcp

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"testing"
)

func frame(payload []byte) []byte {
	out := make([]byte, 8+len(payload))
	binary.LittleEndian.PutUint32(out[:4], uint32(len(payload)))
	binary.LittleEndian.PutUint32(out[4:8], crc32.Checksum(payload, crcTable))
	copy(out[8:], payload)
	return out
}

// FuzzReadFrames feeds arbitrary bytes to the ledger decoder. It never
// panics; the records it accepts are numbered 0..n-1 and fill exactly the
// good prefix, which decodes to the same records on its own (so truncating
// a log to it, as openWAL does, loses nothing that was read).
func FuzzReadFrames(f *testing.F) {
	r0, _ := json.Marshal(Record{Index: 0, Session: "s", Kind: KindCall, Tool: "add_note", Arguments: json.RawMessage(`{"text":"a"}`)})
	r1, _ := json.Marshal(Record{Index: 1, Session: "s", Kind: KindRestore, Generation: 2, Version: "v"})
	two := append(frame(r0), frame(r1)...)
	f.Add(two)
	f.Add(two[:len(two)-3])                // torn tail
	f.Add(append(frame(r0), frame(r0)...)) // index out of order
	bad := bytes.Clone(two)
	bad[20] ^= 0xff // corrupt payload: CRC mismatch
	f.Add(bad)
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, good, err := readFrames(bytes.NewReader(data))
		if err != nil {
			return // a frame whose index breaks the sequence: refused outright
		}
		if good < 0 || good > int64(len(data)) {
			t.Fatalf("good = %d of %d bytes", good, len(data))
		}
		for i, r := range recs {
			if r.Index != uint64(i) {
				t.Fatalf("record %d has index %d", i, r.Index)
			}
		}
		again, g2, err := readFrames(bytes.NewReader(data[:good]))
		if err != nil || g2 != good || len(again) != len(recs) {
			t.Fatalf("good prefix re-read: %d records, %d bytes, %v (first read %d, %d)", len(again), g2, err, len(recs), good)
		}
	})
}
