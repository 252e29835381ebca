package moduletest

import (
	"bytes"
	"testing"
)

// FuzzRead: any bytes decode to cases with ids, or fail with an error.
func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"source": "s", "cases": [{"id": "a", "calls": [{"name": "t", "arguments": {"x": 1.5}, "error": false, "output": 3}], "final_changes": {"users": {"u": {}}}}]}`))
	f.Add([]byte(`{"cases": []}`))
	f.Add([]byte(`{"cases": [{"id": "a", "call": []}]}`))
	f.Add([]byte(`{"cases": [{"id": "a", "calls": null, "final_changes": null}]}`))
	f.Add([]byte(`{"cases": [{"id": "a", "calls": [], "final_changes": {}, "involved_classes": ["X"]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		if len(file.Cases) == 0 {
			t.Fatal("accepted a file without cases")
		}
		for _, c := range file.Cases {
			if c.ID == "" {
				t.Fatal("accepted a case without id")
			}
			if c.Calls == nil && c.FinalChanges == nil {
				t.Fatalf("accepted case %q, which checks nothing", c.ID)
			}
		}
	})
}
