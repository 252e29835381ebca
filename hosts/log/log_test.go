package log

import (
	"context"
	"testing"
)

type rec struct{ logs []string }

func (r *rec) Log(level int, msg string)             { r.logs = append(r.logs, msg) }
func (r *rec) Progress(p, total float64, msg string) { r.logs = append(r.logs, msg) }

func TestBinding(t *testing.T) {
	if FromContext(context.Background()) != nil {
		t.Fatal("unbound")
	}
	r := &rec{}
	if FromContext(WithLogger(context.Background(), r)) != r {
		t.Fatal("bound")
	}
}
