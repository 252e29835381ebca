package config

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/weft-dev/weft/core/train"
)

// Accessors of a node's attributes. Each returns def when the attribute is
// absent; a value that is present but invalid is reported and def is
// returned.

func (n *node) has(name string) bool { _, ok := n.attrs[name]; return ok }

// rng is the range of attribute name's value, or the block's header when
// the attribute is absent.
func (n *node) rng(name string) hcl.Range {
	if a, ok := n.attrs[name]; ok {
		return a.rng
	}
	return n.defRange
}

// elemRange is the range of element i of a list attribute written as a
// list literal, else the whole value's range.
func (n *node) elemRange(name string, i int) hcl.Range {
	a := n.attrs[name]
	if t, ok := a.expr.(*hclsyntax.TupleConsExpr); ok && i < len(t.Exprs) && len(t.Exprs) == a.val.LengthInt() {
		return t.Exprs[i].Range()
	}
	return a.rng
}

// source records the block's ranges for errors found after decoding.
func (n *node) source() *Source {
	s := &Source{Block: n.defRange, Attrs: map[string]hcl.Range{}, Elems: map[string][]hcl.Range{}}
	for name, a := range n.attrs {
		s.Attrs[name] = a.rng
		if t, ok := a.expr.(*hclsyntax.TupleConsExpr); ok {
			for _, e := range t.Exprs {
				s.Elems[name] = append(s.Elems[name], e.Range())
			}
		}
	}
	return s
}

func (n *node) str(name, def string) string {
	if a, ok := n.attrs[name]; ok {
		return a.val.AsString()
	}
	return def
}

func (n *node) num(name string, def float64) float64 {
	if a, ok := n.attrs[name]; ok {
		f, _ := a.val.AsBigFloat().Float64()
		return f
	}
	return def
}

func (n *node) integer(name string, def int) int {
	if a, ok := n.attrs[name]; ok {
		i, _ := a.val.AsBigFloat().Int64()
		return int(i)
	}
	return def
}

func (n *node) boolean(name string, def bool) bool {
	if a, ok := n.attrs[name]; ok {
		return a.val.True()
	}
	return def
}

func (n *node) strs(name string) []string {
	a, ok := n.attrs[name]
	if !ok {
		return nil
	}
	out := []string{}
	for it := a.val.ElementIterator(); it.Next(); {
		_, e := it.Element()
		out = append(out, e.AsString())
	}
	return out
}

func (n *node) child(typ string) *node {
	if bs := n.blocks[typ]; len(bs) > 0 {
		return bs[0]
	}
	return nil
}

// integer decodes a kInt attribute with its default and bounds from the
// schema table: the default when absent; a value out of bounds is
// reported and the default returned.
func (d *decoder) integer(n *node, name string) int {
	a := n.spec.attr(name)
	def, _ := a.dflt.(int)
	if !n.has(name) {
		return def
	}
	v := n.integer(name, def)
	switch {
	case a.min != nil && float64(v) < *a.min:
		summary, detail := "Invalid "+strings.ReplaceAll(name, "_", " "), "%s must be at least %d%s, got %d."
		args := []any{name, int(*a.min), a.hint, v}
		if a.summary != "" {
			summary, detail, args = a.summary, a.detail, []any{int(*a.min), v}
		}
		d.errorf(n.rng(name), summary, detail, args...)
		return def
	case a.max != nil && float64(v) > *a.max:
		d.errorf(n.rng(name), "Invalid "+strings.ReplaceAll(name, "_", " "), "%s must be at most %d%s, got %d.", name, int(*a.max), a.hint, v)
		return def
	}
	return v
}

// number decodes a kNumber attribute with its default and bounds from the
// schema table.
func (d *decoder) number(n *node, name string) float64 {
	a := n.spec.attr(name)
	def, _ := a.dflt.(float64)
	lo, hi := math.Inf(-1), math.Inf(1)
	if a.min != nil {
		lo = *a.min
	}
	if a.max != nil {
		hi = *a.max
	}
	return d.within(n, name, def, lo, hi)
}

// into decodes every attribute of n's schema into the field of *dst (a
// struct: its owner's options type, e.g. train.FilterConfig) whose json
// name is the attribute's, with the table's defaults, bounds and enums
// and the same diagnostics (with ranges) as integer, number, enum and
// flag. A schema attribute without a field, a field without an attribute
// or a kind the field cannot hold is a bug of the table, and panics (the
// schema tests decode every such block).
func (d *decoder) into(n *node, dst any) {
	v := reflect.ValueOf(dst).Elem()
	fields := map[string]reflect.Value{}
	for i := range v.NumField() {
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		fields[name] = v.Field(i)
	}
	if len(fields) != len(n.spec.attrs) {
		panic(fmt.Sprintf("config: block %s has %d attributes, %s %d fields", n.spec.typ, len(n.spec.attrs), v.Type(), len(fields)))
	}
	for _, a := range n.spec.attrs {
		f, ok := fields[a.name]
		if !ok {
			panic(fmt.Sprintf("config: %s has no field for attribute %s.%s", v.Type(), n.spec.typ, a.name))
		}
		switch {
		case a.kind == kInt && f.Kind() == reflect.Int:
			f.SetInt(int64(d.integer(n, a.name)))
		case a.kind == kNumber && f.Kind() == reflect.Float64:
			f.SetFloat(d.number(n, a.name))
		case a.kind == kBool && f.Kind() == reflect.Bool:
			f.SetBool(d.flag(n, a.name))
		case a.kind == kString && f.Kind() == reflect.String && a.enum != nil:
			f.SetString(d.enum(n, a.name))
		default:
			panic(fmt.Sprintf("config: attribute %s.%s (kind %v) cannot decode into %s field of kind %s", n.spec.typ, a.name, a.kind, v.Type(), f.Kind()))
		}
	}
}

// enum decodes a kString attribute that must be one of the table's enum.
func (d *decoder) enum(n *node, name string) string {
	a := n.spec.attr(name)
	def, _ := a.dflt.(string)
	return d.oneOf(n, name, def, a.enum, a.what)
}

// flag decodes a kBool attribute with its default from the table.
func (d *decoder) flag(n *node, name string) bool {
	def, _ := n.spec.attr(name).dflt.(bool)
	return n.boolean(name, def)
}

// within reports a number attribute outside [lo, hi].
func (d *decoder) within(n *node, name string, def, lo, hi float64) float64 {
	v := n.num(name, def)
	if math.IsNaN(v) || v < lo || v > hi {
		d.errorf(n.rng(name), "Value out of range",
			"%s must be in [%g, %g], got %g.", name, lo, hi, v)
		return def
	}
	return v
}

// oneOf reports a string attribute that is not one of allowed.
func (d *decoder) oneOf(n *node, name, def string, allowed []string, what string) string {
	v := n.str(name, def)
	if !slices.Contains(allowed, v) {
		d.errorf(n.rng(name), "Unknown "+what,
			"%q is not a %s; use one of %s.", v, what, quoted(allowed))
		return def
	}
	return v
}

// durationSyntaxRE is time.ParseDuration's syntax: a value it refuses
// that matches overflowed int64 nanoseconds.
var durationSyntaxRE = regexp.MustCompile(`^[-+]?(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+$`)

func (d *decoder) duration(n *node, name string) time.Duration {
	if !n.has(name) {
		return 0
	}
	s := n.str(name, "")
	v, err := time.ParseDuration(s)
	if err != nil {
		if durationSyntaxRE.MatchString(s) {
			d.errorf(n.rng(name), "Duration out of range",
				"%s is %q, which is out of range: a duration is at most %s (about 292 years).", name, s, time.Duration(math.MaxInt64))
			return 0
		}
		d.errorf(n.rng(name), "Invalid duration",
			"%s must be a duration such as \"90s\", \"2m\" or \"1h30m\"; %q is not one.", name, s)
		return 0
	}
	if v < 0 {
		d.errorf(n.rng(name), "Invalid duration", "%s must not be negative, got %q.", name, s)
		return 0
	}
	return v
}

// path resolves a path attribute; when it must exist and does not, that is
// reported at the attribute.
func (d *decoder) path(n *node, name string, mustExist bool, what string) string {
	if !n.has(name) {
		return ""
	}
	raw := n.str(name, "")
	if raw == "" {
		d.errorf(n.rng(name), "Empty path", "%s must not be empty.", name)
		return ""
	}
	p := d.resolve(raw)
	if mustExist {
		d.exists(n.rng(name), raw, p, what)
	}
	return p
}

func (d *decoder) exists(rng hcl.Range, raw, p, what string) {
	if _, err := os.Stat(p); err != nil {
		detail := "%q resolves to %s, which does not exist (relative paths are relative to the config file's directory, %s)."
		if !os.IsNotExist(err) {
			detail = "%q resolves to %s, which cannot be read (relative paths are relative to the config file's directory, %s)."
		}
		d.errorf(rng, strings.ToUpper(what[:1])+what[1:]+" not found", detail, raw, p, d.dir)
	}
}

func (d *decoder) paths(n *node, name, what string) []string {
	var out []string
	for i, raw := range n.strs(name) {
		p := d.resolve(raw)
		d.exists(n.elemRange(name, i), raw, p, what)
		out = append(out, p)
	}
	return out
}

func (d *decoder) object(n *node, name string) json.RawMessage {
	a, ok := n.attrs[name]
	if !ok {
		return nil
	}
	if !a.val.Type().IsObjectType() && !a.val.Type().IsMapType() {
		d.errorf(a.rng, "Incorrect attribute value type",
			"Inappropriate value for attribute %q: an object is required, got %s.", name, a.val.Type().FriendlyName())
		return nil
	}
	b, err := ctyjson.Marshal(a.val, a.val.Type())
	if err != nil {
		d.errorf(a.rng, "Invalid value", "%s cannot be written as JSON: %v.", name, err)
		return nil
	}
	return b
}

// names is a set of declared names of one kind, in file order.
type names struct {
	kind  string // "policy", "harness", ...
	order []string
}

func (s *names) has(n string) bool { return slices.Contains(s.order, n) }

// ref reports a reference to an undeclared name at rng.
func (d *decoder) ref(decl *names, name string, rng hcl.Range, who string) {
	if decl.has(name) {
		return
	}
	declared := "none is declared"
	if len(decl.order) > 0 {
		declared = "declared: " + quoted(decl.order)
	}
	d.errorf(rng, "Undeclared "+decl.kind,
		"%s names %s %q, but there is no %s \"%s\" block (%s).", who, decl.kind, name, decl.kind, name, declared)
}

var digestRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// build turns the decoded tree into a Config, reporting semantic errors.
func (d *decoder) build(root *node, file string) *Config {
	cfg := &Config{File: file, Dir: d.dir}
	modules := &names{kind: "module"}
	policies := &names{kind: "policy"}
	harnesses := &names{kind: "harness"}
	views := &names{kind: "view"}

	for _, n := range root.blocks["module"] {
		m := Module{Name: n.label}
		modules.order = append(modules.order, n.label)
		set := 0
		for _, k := range []string{"path", "bundle", "digest", "docs"} {
			if n.has(k) {
				set++
			}
		}
		if set != 1 {
			d.errorf(n.defRange, "Invalid module source",
				"Module %q needs exactly one of path, bundle, digest and docs; it has %d.", n.label, set)
		}
		m.Docs = d.path(n, "docs", true, "module docs")
		for _, k := range []string{"synthesizer", "script"} {
			if n.has(k) && !n.has("docs") {
				d.errorf(n.rng(k), "Attribute needs docs",
					"%s applies only to a module synthesized from documentation (docs); module %q has none.", k, n.label)
			}
		}
		if m.Docs != "" {
			m.Synthesizer = d.enum(n, "synthesizer")
			m.Script = d.path(n, "script", true, "synthesizer script")
			if (m.Synthesizer == "scripted") != (m.Script != "") {
				d.errorf(n.defRange, "Invalid synthesizer",
					"Module %q: script is required with synthesizer = \"scripted\" and applies to it only.", n.label)
			}
		}
		m.Path = d.path(n, "path", true, "module path")
		m.Bundle = d.path(n, "bundle", true, "module bundle")
		m.Registry = d.path(n, "registry", false, "registry")
		if n.has("digest") {
			m.Digest = n.str("digest", "")
			if !digestRE.MatchString(m.Digest) {
				d.errorf(n.rng("digest"), "Invalid module digest",
					"digest must be \"sha256:\" followed by 64 lowercase hex digits, got %q.", m.Digest)
			}
		}
		for _, k := range []string{"schema", "seed"} {
			if n.has(k) && !n.has("path") {
				d.errorf(n.rng(k), "Attribute needs path",
					"%s applies only to a module built from source (path); module %q has none.", k, n.label)
			}
		}
		m.Schema = d.path(n, "schema", true, "module schema")
		if m.Schema == "" && m.Path != "" {
			if _, err := os.Stat(filepath.Join(m.Path, "schema.sql")); err == nil {
				m.Schema = filepath.Join(m.Path, "schema.sql")
			}
		}
		m.Seed = d.path(n, "seed", true, "module seed")
		// A path or seed that does not exist already has its "not found"
		// diagnostic from d.path; these checks are for ones that do.
		if _, err := os.Stat(m.Path); m.Path != "" && err == nil {
			if err := CheckModulePath(m.Path); err != nil {
				d.errorf(n.rng("path"), "Invalid module path", "%s.", err)
			}
		}
		if _, err := os.Stat(m.Seed); m.Seed != "" && err == nil {
			if err := CheckSeedFile(m.Seed); err != nil {
				d.errorf(n.rng("seed"), "Invalid module seed", "%s.", err)
			}
		}
		cfg.Modules = append(cfg.Modules, m)
	}

	for _, n := range root.blocks["tasks"] {
		ts := TaskSet{Name: n.label}
		if !n.has("tau2") && !n.has("weft") {
			d.errorf(n.defRange, "No tasks",
				"Task set %q needs a tau2 file, weft files, or both.", n.label)
		}
		ts.Tau2 = d.path(n, "tau2", true, "tau2 tasks file")
		if n.has("tau2_tools") && !n.has("tau2") {
			d.errorf(n.rng("tau2_tools"), "Attribute needs tau2",
				"tau2_tools applies only to a tau2 tasks file; task set %q has no tau2.", n.label)
		}
		ts.Tau2Tools = d.path(n, "tau2_tools", true, "tau2 tools file")
		ts.Weft = d.paths(n, "weft", "weft tasks file")
		ts.SystemPrompt = d.path(n, "system_prompt", true, "system prompt file")
		if n.has("modules") {
			ts.Modules = n.strs("modules")
			for i, m := range ts.Modules {
				d.ref(modules, m, n.elemRange("modules", i), "Task set "+quoted([]string{n.label}))
			}
		} else {
			ts.Modules = slices.Clone(modules.order)
		}
		ts.IDs = n.strs("ids")
		ts.Limit = d.integer(n, "limit")
		ts.Source = n.source()
		cfg.Tasks = append(cfg.Tasks, ts)
	}

	for _, n := range root.blocks["policy"] {
		policies.order = append(policies.order, n.label)
		cfg.Policies = append(cfg.Policies, d.policy(n))
	}

	for _, n := range root.blocks["harness"] {
		harnesses.order = append(harnesses.order, n.label)
		h := Harness{Name: n.label, Settings: json.RawMessage("{}")}
		switch {
		case n.has("builtin") && n.has("binary"):
			d.errorf(n.defRange, "Invalid harness source",
				"Harness %q has both builtin and binary; give one.", n.label)
		case n.has("builtin"):
			h.Builtin = d.oneOf(n, "builtin", "", BuiltinHarnesses, "built-in harness")
		case n.has("binary"):
			h.Binary = d.path(n, "binary", true, "harness binary")
		case slices.Contains(BuiltinHarnesses, n.label):
			h.Builtin = n.label
		default:
			d.errorf(n.defRange, "Invalid harness source",
				"Harness %q needs builtin (one of %s) or binary.", n.label, quoted(BuiltinHarnesses))
		}
		h.Args = n.strs("args")
		if n.has("args") && h.Binary == "" {
			d.errorf(n.rng("args"), "Attribute needs binary", "args applies only to a harness binary.")
		}
		if s := d.object(n, "settings"); s != nil {
			h.Settings = s
		}
		h.Source = n.source()
		cfg.Harnesses = append(cfg.Harnesses, h)
	}

	for _, n := range root.blocks["view"] {
		if !slices.Contains(Views, n.label) {
			d.errorf(n.labelRange, "Unknown view",
				"%q is not a task view; use one of %s.", n.label, quoted(Views))
			continue
		}
		views.order = append(views.order, n.label)
	}
	cfg.Views = slices.Clone(views.order)

	if mix := root.child("mix"); mix != nil {
		entries := mix.blocks["entry"]
		if len(entries) == 0 {
			d.errorf(mix.defRange, "Empty mix", "The mix needs at least one entry block.")
		}
		sum := 0.0
		seen := map[[2]string]hcl.Range{}
		for _, e := range entries {
			me := MixEntry{View: e.str("view", ""), Harness: e.str("harness", ""), Weight: e.num("weight", 1)}
			if first, dup := seen[[2]string{me.View, me.Harness}]; dup {
				d.errorf(e.defRange, "Duplicate mix entry",
					"View %q with harness %q is already in the mix (%s:%d); put their weights in one entry.", me.View, me.Harness, first.Filename, first.Start.Line)
			} else {
				seen[[2]string{me.View, me.Harness}] = e.defRange
			}
			if e.has("view") {
				d.ref(views, me.View, e.rng("view"), "Mix entry")
			}
			if e.has("harness") {
				d.ref(harnesses, me.Harness, e.rng("harness"), "Mix entry")
			}
			if math.IsNaN(me.Weight) || math.IsInf(me.Weight, 0) || me.Weight < 0 {
				d.errorf(e.rng("weight"), "Invalid mix weight",
					"A weight must be a finite number >= 0, got %g.", me.Weight)
				me.Weight = 0
			}
			sum += me.Weight
			cfg.Mix = append(cfg.Mix, me)
		}
		if len(entries) > 0 && sum == 0 {
			d.errorf(mix.defRange, "Mix weights are all zero",
				"At least one mix entry needs a weight > 0, or no episode would run.")
		}
	} else {
		for _, v := range views.order {
			for _, h := range harnesses.order {
				cfg.Mix = append(cfg.Mix, MixEntry{View: v, Harness: h, Weight: 1})
			}
		}
	}

	cfg.Verifier = d.plugin(root.child("verifier"), "verifier", "exec", policies)
	cfg.Attributor = d.plugin(root.child("attributor"), "attributor", "rules", nil)

	if n := root.child("rollout"); n != nil {
		r := Rollout{Policy: n.str("policy", "")}
		if n.has("policy") {
			d.ref(policies, r.Policy, n.rng("policy"), "rollout")
		}
		r.EpisodesPerTask = d.integer(n, "episodes_per_task")
		r.Concurrency = d.integer(n, "concurrency")
		r.EpisodeTimeout = d.duration(n, "episode_timeout")
		r.TurnTimeout = d.duration(n, "turn_timeout")
		r.Retries = d.integer(n, "retries")
		r.Backoff = d.duration(n, "backoff")
		r.MaxTurns = d.integer(n, "max_turns")
		r.MaxToolCalls = d.integer(n, "max_tool_calls")
		r.Seed = uint64(d.integer(n, "seed"))
		r.Queue = n.str("queue", "")
		r.Source = n.source()
		cfg.Rollout = r
	}

	defView := ""
	if views.has("simuser") {
		defView = "simuser"
	} else if len(views.order) > 0 {
		defView = views.order[0]
	}
	defHarness := ""
	if len(harnesses.order) > 0 {
		defHarness = harnesses.order[0]
	}
	pair := func(n *node, who string) (string, string) {
		v, h := n.str("view", defView), n.str("harness", defHarness)
		if n.has("view") {
			d.ref(views, v, n.rng("view"), who)
		}
		if n.has("harness") {
			d.ref(harnesses, h, n.rng("harness"), who)
		}
		return v, h
	}

	if n := root.child("sft"); n != nil {
		s := &SFT{Policy: n.str("policy", "")}
		if n.has("policy") {
			d.ref(policies, s.Policy, n.rng("policy"), "sft")
		}
		s.Mode = d.enum(n, "mode")
		s.Retries = d.integer(n, "retries")
		s.Threshold = d.number(n, "threshold")
		s.View, s.Harness = pair(n, "sft")
		s.Concurrency = d.integer(n, "concurrency")
		if !n.has("concurrency") {
			s.Concurrency = max(1, cfg.Rollout.Concurrency)
		}
		s.Source = n.source()
		cfg.SFT = s
	}

	if n := root.child("grpo"); n != nil {
		g := &GRPO{Policy: n.str("policy", cfg.Rollout.Policy)}
		if n.has("policy") {
			d.ref(policies, g.Policy, n.rng("policy"), "grpo")
		}
		g.GroupSize = d.integer(n, "group_size")
		g.Eps = n.num("eps", n.spec.attr("eps").dflt.(float64))
		if !(g.Eps > 0) || math.IsInf(g.Eps, 0) {
			d.errorf(n.rng("eps"), "Invalid eps", "eps must be a finite number > 0, got %g.", g.Eps)
		}
		g.Level = d.enum(n, "level")
		g.Continue = d.enum(n, "continue")
		g.Mask = d.flag(n, "mask")
		g.Reward = d.enum(n, "reward")
		g.View, g.Harness = pair(n, "grpo")
		g.Concurrency = d.integer(n, "concurrency")
		if f := n.child("consistency_filter"); f != nil {
			g.Filter = new(train.FilterConfig)
			d.into(f, g.Filter)
			if cfg.Verifier.Judge == "" {
				d.errorf(f.defRange, "Consistency filter needs a judge",
					"The consistency filter compares executable scores with rubric scores; set verifier { judge = \"POLICY\" } so rubric items are scored.")
			}
		}
		g.Source = n.source()
		cfg.GRPO = g
	}

	if n := root.child("ftrl"); n != nil {
		cfg.FTRL = d.ftrl(n, cfg, policies)
	}
	if n := root.child("evolve"); n != nil {
		cfg.Evolve = d.evolve(n, cfg)
	}

	if n := root.child("compose"); n != nil {
		cfg.Compose = d.compose(n)
	}

	if n := root.child("pipeline"); n != nil && n.has("stages") {
		cfg.Stages = d.stages(n, cfg)
	}

	out := root.child("output")
	if out == nil {
		out = &node{attrs: map[string]*attrVal{}}
	}
	cfg.Output.Dir = d.path(out, "dir", false, "output dir")
	if cfg.Output.Dir == "" {
		cfg.Output.Dir = filepath.Join(d.dir, "runs", strings.TrimSuffix(filepath.Base(file), filepath.Ext(file)))
	}
	if c := cfg.Compose; c != nil {
		if c.Out == "" {
			c.Out = filepath.Join(cfg.Output.Dir, "tasks.weft.json")
		}
		if c.Report == "" {
			c.Report = strings.TrimSuffix(c.Out, ".json") + ".report.json"
			if strings.HasSuffix(c.Out, ".weft.json") {
				c.Report = strings.TrimSuffix(c.Out, ".weft.json") + ".report.json"
			}
		}
	}
	if out.has("formats") {
		cfg.Output.Formats = []string{}
		for i, f := range out.strs("formats") {
			if !slices.Contains(ExportFormats, f) {
				d.errorf(out.elemRange("formats", i), "Unknown export format",
					"%q is not an export format; use one of %s.", f, quoted(ExportFormats))
			}
			cfg.Output.Formats = append(cfg.Output.Formats, f)
		}
	} else {
		cfg.Output.Formats = []string{"trl_jsonl", "rl_jsonl"}
	}
	return cfg
}

func (d *decoder) policy(n *node) Policy {
	p := Policy{Name: n.label, Source: n.source()}
	ep, sc := n.child("endpoint"), n.child("scripted")
	switch {
	case ep != nil && sc != nil:
		d.errorf(sc.defRange, "Invalid policy",
			"Policy %q has both an endpoint block and a scripted block; a policy is one or the other.", n.label)
	case ep == nil && sc == nil:
		d.errorf(n.defRange, "Invalid policy",
			"Policy %q needs an endpoint block (an OpenAI-compatible model) or a scripted block (the offline scripted policy).", n.label)
	}
	if ep != nil {
		e := &Endpoint{BaseURL: ep.str("base_url", ""), Model: ep.str("model", ""), APIKeyEnv: ep.str("api_key_env", "")}
		if ep.has("base_url") {
			u, err := url.Parse(e.BaseURL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				d.errorf(ep.rng("base_url"), "Invalid base_url",
					"base_url must be an http or https URL such as \"http://127.0.0.1:8000/v1\", got %q.", e.BaseURL)
			}
		}
		if ep.has("model") && e.Model == "" {
			d.errorf(ep.rng("model"), "Empty model", "model must name the model the endpoint serves.")
		}
		e.Timeout = d.duration(ep, "timeout")
		e.MaxRetries = d.integer(ep, "max_retries")
		e.MaxConcurrency = d.integer(ep, "max_concurrency")
		e.ExtraBody = d.object(ep, "extra_body")
		e.Source = ep.source()
		p.Endpoint = e
	}
	if sc != nil {
		s := &Scripted{Seed: uint64(d.integer(sc, "seed"))}
		if f := sc.child("faults"); f != nil {
			d.into(f, &s.Faults)
		}
		p.Scripted = s
	}
	if sm := n.child("sampling"); sm != nil {
		if sm.has("temperature") {
			t := d.number(sm, "temperature")
			p.Sampling.Temperature = &t
		}
		if sm.has("top_p") {
			t := d.within(sm, "top_p", 1, 0, 1)
			if t == 0 {
				d.errorf(sm.rng("top_p"), "Value out of range", "top_p must be in (0, 1], got 0.")
			}
			p.Sampling.TopP = &t
		}
		p.Sampling.MaxTokens = d.integer(sm, "max_tokens")
		if sm.has("seed") {
			s := int64(sm.integer("seed", 0))
			p.Sampling.Seed = &s
		}
		p.Sampling.Stop = sm.strs("stop")
		p.Sampling.Logprobs = d.flag(sm, "logprobs")
	}
	return p
}

// plugin decodes the verifier or attributor block (n may be nil).
func (d *decoder) plugin(n *node, what, builtin string, policies *names) Plugin {
	if n == nil {
		return Plugin{Builtin: builtin}
	}
	var p Plugin
	switch {
	case n.has("builtin") && n.has("binary"):
		d.errorf(n.defRange, "Invalid "+what+" source", "The %s has both builtin and binary; give one.", what)
	case n.has("binary"):
		p.Binary = d.path(n, "binary", true, what+" binary")
	default:
		p.Builtin = d.oneOf(n, "builtin", builtin, []string{builtin}, "built-in "+what)
	}
	p.Args = n.strs("args")
	if n.has("args") && p.Binary == "" {
		d.errorf(n.rng("args"), "Attribute needs binary", "args applies only to a %s binary.", what)
	}
	if policies != nil && n.has("judge") {
		p.Judge = n.str("judge", "")
		d.ref(policies, p.Judge, n.rng("judge"), what+" judge")
	}
	if policies != nil && n.has("basis") {
		p.Basis = d.oneOf(n, "basis", "weft", []string{"weft", "tau2"}, what+" basis")
	}
	p.Source = n.source()
	return p
}

// stages checks the pipeline: known stages, in order, at most once each,
// and the blocks the stages need.
func (d *decoder) stages(n *node, cfg *Config) []string {
	stages := n.strs("stages")
	if cfg.FTRL != nil {
		if !slices.Equal(stages, []string{StageFTRL}) {
			d.errorf(n.rng("stages"), "FTRL pipeline", "A config with an ftrl block runs exactly one stage: stages = [\"ftrl\"].")
		}
		return stages
	}
	if cfg.Compose != nil {
		if !slices.Equal(stages, []string{StageCompose}) {
			d.errorf(n.rng("stages"), "Compose pipeline", "A config with a compose block runs exactly one stage: stages = [\"compose\"].")
		}
		return stages
	}
	if cfg.Evolve != nil {
		if !slices.Equal(stages, []string{StageEvolve}) {
			d.errorf(n.rng("stages"), "Evolve pipeline", "A config with an evolve block runs exactly one stage: stages = [\"evolve\"].")
		}
		return stages
	}
	last, lastName := -1, ""
	for i, s := range stages {
		rng := n.elemRange("stages", i)
		pos := slices.Index(AllStages, s)
		switch {
		case pos < 0:
			d.errorf(rng, "Unknown stage", "%q is not a pipeline stage; use %s.", s, quoted(AllStages))
			continue
		case pos == last:
			d.errorf(rng, "Duplicate stage", "Stage %q is listed twice; each stage runs at most once.", s)
			continue
		case pos < last:
			d.errorf(rng, "Stage out of order",
				"Stage %q must come before %q: stages run in the order %s.", s, lastName, quoted(AllStages))
			continue
		}
		last, lastName = pos, s
		switch {
		case s == "sft" && cfg.SFT == nil:
			d.errorf(rng, "Stage needs a block", "The sft stage needs an sft block (the teacher policy and the retry limit).")
		case s == "grpo" && cfg.GRPO == nil:
			d.errorf(rng, "Stage needs a block", "The grpo stage needs a grpo block (group size, reward, ...).")
		}
	}
	if len(stages) == 0 {
		d.errorf(n.rng("stages"), "No stages", "The pipeline needs at least one stage; use %s.", quoted(AllStages))
	}
	return stages
}

// ftrl decodes the ftrl block. The policies it runs are the rollout's
// and group_policy, both scripted (FTRL's episodes run offline).
func (d *decoder) ftrl(n *node, cfg *Config, policies *names) *FTRL {
	f := &FTRL{
		RetailSeed:      d.path(n, "retail_seed", true, "retail seed"),
		AirlineSeed:     d.path(n, "airline_seed", true, "airline seed"),
		Scenarios:       d.integer(n, "scenarios"),
		Seed:            uint64(d.integer(n, "seed")),
		Mode:            d.enum(n, "mode"),
		GroupSize:       d.integer(n, "group_size"),
		Policy:          cfg.Rollout.Policy,
		GroupPolicy:     n.str("group_policy", cfg.Rollout.Policy),
		MaxTurns:        d.integer(n, "max_turns"),
		EmptyReply:      d.number(n, "empty_reply"),
		GroupEmptyReply: d.number(n, "group_empty_reply"),
		ParallelCalls:   d.number(n, "parallel_calls"),
		ServerDirs:      d.flag(n, "server_dirs"),
		Source:          n.source(),
	}
	if !n.has("retail_seed") && !n.has("airline_seed") {
		d.errorf(n.defRange, "FTRL needs a database", "Set retail_seed and/or airline_seed: the questions are grounded in them.")
	}
	if n.has("group_policy") {
		d.ref(policies, f.GroupPolicy, n.rng("group_policy"), "ftrl group_policy")
	}
	for _, p := range cfg.Policies {
		if (p.Name == f.Policy || p.Name == f.GroupPolicy) && p.Scripted == nil {
			d.errorf(n.defRange, "FTRL runs offline", "Policy %q is not scripted: the ftrl stage's episodes and GRPO candidates come from scripted policies with faults.", p.Name)
		}
	}
	return f
}

// evolve decodes the evolve block: the system (the benchmark, or a server
// with its tasks), the classes, and a scripted rollout policy.
func (d *decoder) evolve(n *node, cfg *Config) *Evolve {
	e := &Evolve{
		Rounds:           d.integer(n, "rounds"),
		Budget:           d.integer(n, "budget"),
		Classes:          EvolveClasses,
		Synthesizer:      d.enum(n, "synthesizer"),
		Script:           d.path(n, "script", true, "script"),
		Episodes:         d.integer(n, "episodes"),
		BenchmarkDocs:    d.path(n, "benchmark_docs", true, "benchmark docs"),
		BenchmarkServers: d.integer(n, "benchmark_servers"),
		Seed:             uint64(d.integer(n, "seed")),
		Server:           d.path(n, "server", true, "server"),
		Tau2Tasks:        d.path(n, "tau2_tasks", true, "tau2 tasks"),
		Tasks:            d.path(n, "tasks", true, "tasks"),
		Policy:           cfg.Rollout.Policy,
		Source:           n.source(),
	}
	if n.has("classes") {
		e.Classes = n.strs("classes")
		for i, c := range e.Classes {
			if !slices.Contains(EvolveClasses, c) {
				d.errorf(n.elemRange("classes", i), "Unknown class", "%q cannot be revised; use %s (policy failures stay training signal).", c, quoted(EvolveClasses))
			}
		}
	}
	switch {
	case (e.BenchmarkDocs == "") == (e.Server == ""):
		d.errorf(n.defRange, "Evolve needs one system", "Set benchmark_docs (the planted-defect benchmark) or server (a server as shipped), not both.")
	case e.Server != "" && (e.Tau2Tasks == "") == (e.Tasks == ""):
		d.errorf(n.defRange, "Evolve needs tasks", "With server, set tau2_tasks or tasks (one of them).")
	}
	if e.Synthesizer == "scripted" && e.Script == "" {
		d.errorf(n.defRange, "Scripted synthesizer needs a script", "Set script to the scripted synthesizer's recorded answers.")
	}
	for _, p := range cfg.Policies {
		if p.Name == e.Policy && p.Scripted == nil {
			d.errorf(n.defRange, "Evolve runs offline", "Policy %q is not scripted: the evolve stage's episodes come from a scripted policy with faults.", p.Name)
		}
	}
	return e
}

// compose decodes the compose block: at least two server spec
// directories, each once and each holding a server.json; the knobs with
// their schema bounds; spread below turns.
func (d *decoder) compose(n *node) *Compose {
	c := &Compose{
		Seed:           uint64(d.integer(n, "seed")),
		Tasks:          d.integer(n, "tasks"),
		Turns:          d.integer(n, "turns"),
		Spread:         d.integer(n, "spread"),
		GenSeeds:       d.integer(n, "gen_seeds"),
		PerTool:        d.integer(n, "per_tool"),
		Rounds:         d.integer(n, "rounds"),
		Distractors:    d.integer(n, "distractors"),
		SharedEntities: d.integer(n, "shared_entities"),
		MaxAttempts:    d.integer(n, "max_attempts"),
		Out:            d.path(n, "out", false, "compose out"),
		Report:         d.path(n, "report", false, "compose report"),
		Source:         n.source(),
	}
	seen := map[string]int{}
	for i, raw := range n.strs("servers") {
		rng := n.elemRange("servers", i)
		p := d.resolve(raw)
		if j, dup := seen[p]; dup {
			d.errorf(rng, "Duplicate server", "%q is listed twice (first as servers[%d]); each server joins the group once.", raw, j)
			continue
		}
		seen[p] = i
		fi, err := os.Stat(p)
		switch {
		case err != nil:
			d.errorf(rng, "Unknown server", "%q resolves to %s, which does not exist (relative paths are relative to the config file's directory, %s).", raw, p, d.dir)
			continue
		case !fi.IsDir():
			d.errorf(rng, "Unknown server", "%q resolves to %s, which is not a server spec directory.", raw, p)
			continue
		}
		if _, err := os.Stat(filepath.Join(p, "server.json")); err != nil {
			d.errorf(rng, "Unknown server", "%s has no server.json: a compose server is a weft.server/v1 spec directory (weft synth env writes one).", p)
			continue
		}
		c.Servers = append(c.Servers, p)
	}
	if n.has("servers") && len(n.strs("servers")) < 2 {
		d.errorf(n.rng("servers"), "Compose needs two servers", "Composition crosses servers: list at least two, got %d.", len(n.strs("servers")))
	}
	if n.has("spread") {
		if c.Spread >= c.Turns {
			d.errorf(n.rng("spread"), "Invalid spread", "spread must be less than turns (%d), got %d: a task draws its atomic turns from [turns-spread, turns+spread].", c.Turns, c.Spread)
		}
	}
	return c
}
