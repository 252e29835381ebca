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

func TestFTRLCasesDefaultProbe(t *testing.T) {
	cases := loadFTRLCases(t)
	pass := 0
	for _, c := range cases {
		ck, err := CheckFTRLCase(context.Background(), c, FTRLDefault)
		if err != nil {
			t.Logf("%s: %v", c.ID, err)
			continue
		}
		if ck.Pass {
			pass++
		} else {
			t.Logf("%s: %v", c.ID, ck.Diffs)
		}
	}
	t.Logf("%d of %d pass", pass, len(cases))
}
