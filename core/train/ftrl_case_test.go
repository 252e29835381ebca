package train

import (
	"context"
	"os"
	"testing"
)

const ftrlCasesPath = "../../examples/data/ftrl-reward/cases.jsonl"

func loadFTRLCases(t *testing.T) []*FTRLCase {
	t.Helper()
	f, err := os.Open(ftrlCasesPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []*FTRLCase
	if err := ReadFTRLCases(f, func(line int, c *FTRLCase, err error) error {
		if err != nil {
			t.Fatalf("line %d: %v", line, err)
		}
		out = append(out, c)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestFTRLCasesCompatible(t *testing.T) {
	cases := loadFTRLCases(t)
	pass, render := 0, 0
	for _, c := range cases {
		ck, err := CheckFTRLCase(context.Background(), c, FTRLCompatible)
		if err != nil {
			t.Errorf("%s: %v", c.ID, err)
			continue
		}
		if ck.Pass {
			pass++
		} else {
			t.Errorf("%s: %v", c.ID, ck.Diffs)
		}
		render += len(ck.RenderDiffs)
		for _, d := range ck.RenderDiffs {
			t.Errorf("%s: %s", c.ID, d)
		}
	}
	t.Logf("%d of %d pass, %d render diffs", pass, len(cases), render)
}

// TestFTRLDefaultDifferencesPerQuirk scores every case in FTRLDefault and
// attributes each disagreement with FTRL to the one quirk that, restored
// alone, makes the case pass.
func TestFTRLDefaultDifferencesPerQuirk(t *testing.T) {
	cases := loadFTRLCases(t)
	pass := 0
	per := map[string][]string{}
	for _, c := range cases {
		ck, err := CheckFTRLCase(context.Background(), c, FTRLDefault)
		if err != nil {
			t.Fatalf("%s: %v", c.ID, err)
		}
		if ck.Pass {
			pass++
			continue
		}
		var fixes []string
		for _, q := range ftrlQuirkNames {
			ck, err := CheckFTRLCase(context.Background(), c, ftrlCustom|FTRLMode(q.q))
			if err != nil {
				t.Fatalf("%s with %s: %v", c.ID, q.name, err)
			}
			if ck.Pass {
				fixes = append(fixes, q.name)
			}
		}
		if len(fixes) != 1 {
			t.Errorf("%s: fixed by %v, want exactly one quirk", c.ID, fixes)
			continue
		}
		per[fixes[0]] = append(per[fixes[0]], c.ID)
	}
	for _, q := range ftrlQuirkNames {
		t.Logf("%s: %d %v", q.name, len(per[q.name]), per[q.name])
	}
	t.Logf("default: %d passed, %d failed", pass, len(cases)-pass)
}
