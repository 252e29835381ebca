package dataset

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// FuzzReadFTRLParquet: ReadFTRLParquet of any bytes returns records or an
// error ("dataset: reading FTRL parquet"), never panics; records it
// returns survive WriteFTRLParquet and a second read unchanged. Seed
// corpus: testdata/fuzz/FuzzReadFTRLParquet (a file weft wrote, cut
// short, with a flipped footer byte).
func FuzzReadFTRLParquet(f *testing.F) {
	var b bytes.Buffer
	if err := WriteFTRLParquet(&b, ftrlRecords()); err != nil {
		f.Fatal(err)
	}
	f.Add(b.Bytes())
	f.Add([]byte("PAR1PAR1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := ReadFTRLParquet(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "dataset: reading FTRL parquet") {
				t.Fatalf("error %q without the package's prefix", err)
			}
			return
		}
		for i := range recs {
			for j := range recs[i].Messages {
				// Names and reasoning have no column; a read never yields them.
				if m := recs[i].Messages[j]; m.Name != "" || m.Reasoning != "" {
					t.Fatalf("record %d message %d: %+v", i, j, m)
				}
			}
		}
		var again bytes.Buffer
		if err := WriteFTRLParquet(&again, recs); err != nil {
			t.Fatalf("rewriting %d records read: %v", len(recs), err)
		}
		back, err := ReadFTRLParquet(bytes.NewReader(again.Bytes()), int64(again.Len()))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(recs, back, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("read, write, read (-first +second):\n%s", diff)
		}
	})
}
