package suggest

import "testing"

func TestClosest(t *testing.T) {
	known := []string{"id", "calls", "final_changes", "build", "inspect"}
	for in, want := range map[string]string{
		"call": "calls", "Calls": "calls", "final_change": "final_changes", "final": "final_changes",
		"biuld": "build", "inspekt": "inspect", "zzzzzz": "", "calls": "calls", "x": "id", "": "id",
	} {
		if got := Closest(in, known); got != want {
			t.Errorf("Closest(%q) = %q, want %q", in, got, want)
		}
	}
	if d := Distance("kitten", "sitting"); d != 3 {
		t.Errorf("Distance(kitten, sitting) = %d, want 3", d)
	}
}
