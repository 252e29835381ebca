package module

// ToolNames returns the names a lifecycle group of modules with manifests
// ms exposes their tools under, per module in group order and tool in
// manifest order: a tool's own name when no other module of the group has
// a tool of that name, else module + "__" + tool for each module that has
// it (the prefix rule, docs/api.md). MegaMCP's groups and core/synth/tasks'
// environments both name tools by it.
func ToolNames(ms []*Manifest) [][]string {
	count := map[string]int{}
	for _, m := range ms {
		for _, t := range m.Tools {
			count[t.Name]++
		}
	}
	out := make([][]string, len(ms))
	for i, m := range ms {
		for _, t := range m.Tools {
			n := t.Name
			if count[n] > 1 {
				n = m.Name + "__" + t.Name
			}
			out[i] = append(out[i], n)
		}
	}
	return out
}
