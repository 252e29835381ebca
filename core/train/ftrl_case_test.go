package train

import (
	"context"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
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
	if pass != 300 || len(cases) != 300 || render != 0 {
		t.Errorf("%d of %d pass, %d render diffs; want 300 of 300, 0", pass, len(cases), render)
	}
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
	want := map[string][]string{
		"suffix-once": {"pub-009-suffix_tokens", "pub-126-missing_close_last", "pub-286-suffix_tokens"},
		"lstrip-set": {"pub-065-lstrip_quirk", "pub-075-lstrip_quirk", "pub-082-lstrip_quirk", "pub-084-lstrip_quirk",
			"pub-128-lstrip_quirk", "pub-134-lstrip_quirk", "pub-199-lstrip_quirk", "pub-239-lstrip_quirk", "pub-240-lstrip_quirk"},
		"py-space": {"pub-014-whitespace_only", "pub-039-whitespace_only", "pub-099-whitespace_only", "pub-193-whitespace_only", "pub-242-unicode_ws_block"},
		"py-lower": {"pub-117-unicode", "pub-146-final_match", "pub-238-unicode"},
		"py-json":  {"pub-005-nan_args", "pub-072-nan_args", "pub-101-nan_args", "pub-260-nan_args"},
		"any-name": {"pub-008-nonstring_name", "pub-050-nonstring_name", "pub-067-nonstring_name", "pub-190-nonstring_name", "pub-288-nonstring_name"},
	}
	if diff := cmp.Diff(want, per); diff != "" {
		t.Errorf("default-mode differences per quirk (-want +got):\n%s", diff)
	}
	if pass != 271 {
		t.Errorf("default mode: %d of %d cases equal FTRL's, want 271", pass, len(cases))
	}
	// Restoring every quirk is the compatible mode.
	for _, c := range cases {
		if ck, err := CheckFTRLCase(context.Background(), c, ftrlCustom|FTRLMode(quirkAll)); err != nil || !ck.Pass {
			t.Errorf("%s with all quirks: %v %v", c.ID, err, ck.Diffs)
		}
	}
}
