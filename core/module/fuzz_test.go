package module

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzReadBundle: any bytes either fail with ErrInvalidBundle or decode to a
// bundle whose canonical tar decodes back to the same digest.
func FuzzReadBundle(f *testing.F) {
	b := &Bundle{Manifest: Manifest{ABI: ABIVersion, Name: "m", Version: "1", Tables: Tables{Owns: []string{"t"}}}, Wasm: []byte("\x00asm"), Schema: "CREATE TABLE t (id INT PRIMARY KEY)", Seed: []byte(`{"t": []}`)}
	tarred, err := b.Tar()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(tarred)
	f.Add([]byte{})
	f.Add(tarred[:len(tarred)/2])
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ReadBundle(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrInvalidBundle) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		d1, err := got.Digest()
		if err != nil {
			return // manifest fields that do not re-encode
		}
		again, err := got.Tar()
		if err != nil {
			t.Fatal(err)
		}
		back, err := ReadBundle(bytes.NewReader(again))
		if err != nil {
			t.Fatalf("canonical tar does not decode: %v", err)
		}
		if d2, _ := back.Digest(); d2 != d1 {
			t.Fatalf("digest changed on round trip: %s vs %s", d1, d2)
		}
	})
}
