package synth_test

import (
	"os"
	"testing"

	"github.com/weft-dev/weft/core/synth"
)

// FuzzParseScript: any input is a checked script or an error, never a
// panic; an accepted script has keyed answers with exactly one source.
func FuzzParseScript(f *testing.F) {
	if b, err := os.ReadFile("testdata/library.script.json"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"format":"weft.synth-script/v1","answers":[{"docs":"x","round":0,"raw":"not json"}]}`))
	f.Add([]byte(`{"format":"weft.synth-script/v1","answers":[{"docs":"x","round":9,"file":"a"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := synth.ParseScript(data)
		if err != nil {
			return
		}
		for _, a := range sc.Answers {
			n := 0
			if a.Raw != nil {
				n++
			}
			if len(a.Server) > 0 {
				n++
			}
			if a.File != "" {
				n++
			}
			if a.Docs == "" || a.Round < 0 || a.Round > synth.MaxRevisions || n != 1 {
				t.Fatalf("accepted a bad answer: %+v", a)
			}
		}
	})
}
