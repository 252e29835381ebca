package wire

import (
	"fmt"
	"github.com/weft-dev/weft/sdk/plugin"

	"github.com/weft-dev/weft/core/state"
	pb "github.com/weft-dev/weft/sdk/plugin/pluginpb/v2"
)

func values(xs []any) ([]*pb.Value, error) {
	l, err := plugin.ListOf(xs)
	if err != nil {
		return nil, err
	}
	return l.Values, nil
}

func fromValues(vs []*pb.Value) []any { return plugin.GoList(&pb.ValueList{Values: vs}) }

// Changes converts row-level changes (nil for nil). Errors: a value with
// no protocol form.
func Changes(c *state.Changes) (*pb.Changes, error) {
	if c == nil {
		return nil, nil
	}
	out := &pb.Changes{}
	for _, td := range c.Tables {
		p := &pb.TableDiff{Table: td.Table, Schema: td.Schema, Columns: td.Columns, PrimaryKey: td.PrimaryKey}
		for _, rows := range []struct {
			in  []state.Row
			out *[]*pb.RowValues
		}{{td.Added, &p.Added}, {td.Removed, &p.Removed}} {
			for _, r := range rows.in {
				k, err := values(r.Key)
				if err != nil {
					return nil, fmt.Errorf("table %s: %w", td.Table, err)
				}
				v, err := values(r.Values)
				if err != nil {
					return nil, fmt.Errorf("table %s: %w", td.Table, err)
				}
				*rows.out = append(*rows.out, &pb.RowValues{Key: k, Values: v})
			}
		}
		for _, rc := range td.Changed {
			k, err := values(rc.Key)
			if err != nil {
				return nil, fmt.Errorf("table %s: %w", td.Table, err)
			}
			prc := &pb.RowChange{Key: k}
			for _, cc := range rc.Columns {
				o, err := plugin.ValueOf(cc.Old)
				if err != nil {
					return nil, fmt.Errorf("table %s column %s: %w", td.Table, cc.Column, err)
				}
				n, err := plugin.ValueOf(cc.New)
				if err != nil {
					return nil, fmt.Errorf("table %s column %s: %w", td.Table, cc.Column, err)
				}
				prc.Columns = append(prc.Columns, &pb.ColumnChange{Column: cc.Column, Old: o, New: n})
			}
			p.Changed = append(p.Changed, prc)
		}
		out.Tables = append(out.Tables, p)
	}
	for _, fc := range c.Files {
		out.Files = append(out.Files, &pb.FileDiff{Path: fc.Path, Change: fileChangeKind[fc.Change], TextDiff: fc.TextDiff, OldSha256: fc.OldSHA256, NewSha256: fc.NewSHA256})
	}
	return out, nil
}

var fileChangeKind = map[string]pb.FileChangeKind{
	state.FileAdded:   pb.FileChangeKind_FILE_CHANGE_KIND_ADDED,
	state.FileRemoved: pb.FileChangeKind_FILE_CHANGE_KIND_REMOVED,
	state.FileChanged: pb.FileChangeKind_FILE_CHANGE_KIND_CHANGED,
}

func fromFileChangeKind(k pb.FileChangeKind) string {
	for s, v := range fileChangeKind {
		if v == k {
			return s
		}
	}
	return ""
}

// FromChanges converts back (values as FromValue gives them).
func FromChanges(p *pb.Changes) *state.Changes {
	if p == nil {
		return nil
	}
	out := &state.Changes{Tables: []state.TableDiff{}}
	for _, t := range p.GetTables() {
		td := state.TableDiff{Table: t.GetTable(), Schema: t.GetSchema(), Columns: t.GetColumns(), PrimaryKey: t.GetPrimaryKey()}
		for _, r := range t.GetAdded() {
			td.Added = append(td.Added, state.Row{Key: fromValues(r.GetKey()), Values: fromValues(r.GetValues())})
		}
		for _, r := range t.GetRemoved() {
			td.Removed = append(td.Removed, state.Row{Key: fromValues(r.GetKey()), Values: fromValues(r.GetValues())})
		}
		for _, rc := range t.GetChanged() {
			c := state.RowChange{Key: fromValues(rc.GetKey())}
			for _, cc := range rc.GetColumns() {
				c.Columns = append(c.Columns, state.ColumnChange{Column: cc.GetColumn(), Old: plugin.GoValue(cc.GetOld()), New: plugin.GoValue(cc.GetNew())})
			}
			td.Changed = append(td.Changed, c)
		}
		out.Tables = append(out.Tables, td)
	}
	for _, f := range p.GetFiles() {
		out.Files = append(out.Files, state.FileChange{Path: f.GetPath(), Change: fromFileChangeKind(f.GetChange()), TextDiff: f.GetTextDiff(), OldSHA256: f.GetOldSha256(), NewSHA256: f.GetNewSha256()})
	}
	return out
}
