package ftrl

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// Tool is a tool document: stage (b) writes one per sub-question, stage (c)
// merges them, stage (d) rewrites them. Its OpenAI function schema is
// Function(); its implementation is generated from the same fields by
// Deploy.
type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Kind        string `json:"kind"`
	// Attrs are the attributes the tool returns (all of them), or, with
	// Selector, the attributes its "field" argument selects from.
	Attrs []string `json:"attrs"`
	// Keys are the entity's key parameters (required).
	Keys []string `json:"keys"`
	// Selector: function generalization's required enum argument "field".
	Selector bool `json:"selector,omitempty"`
	// Optional are parameter expansion's optional boolean arguments.
	Optional []string `json:"optional,omitempty"`
	// Widened are the key parameters type generalization lets be integers
	// too (JSON Schema type ["string", "integer"]).
	Widened []string `json:"widened,omitempty"`
	// Distractor marks a tool toolset expansion added: no sub-question
	// needs it.
	Distractor bool `json:"distractor,omitempty"`
	// From lists the documents (sub-question ids) the tool serves.
	From []string `json:"from,omitempty"`
}

// OptionalIncludeKind is the optional argument parameter expansion adds:
// when true the result also names the entity kind.
const OptionalIncludeKind = "include_kind"

// Function is the tool's OpenAI function schema ({"type": "function",
// "function": {"name", "description", "parameters"}}), the form FTRL's
// "tools" field holds.
func (t *Tool) Function() map[string]any {
	props := map[string]any{}
	var req []string
	for _, k := range t.Keys {
		p := map[string]any{"type": "string", "description": keyDescription(k)}
		if slices.Contains(t.Widened, k) {
			p["type"] = []any{"string", "integer"}
			p["description"] = keyDescription(k) + " A number is read as its decimal digits."
		}
		props[k] = p
		req = append(req, k)
	}
	if t.Selector {
		enum := make([]any, len(t.Attrs))
		for i, a := range t.Attrs {
			enum[i] = a
		}
		props["field"] = map[string]any{"type": "string", "enum": enum, "description": "Which attribute to return."}
		req = append(req, "field")
	}
	for _, o := range t.Optional {
		props[o] = map[string]any{"type": "boolean", "description": "Also return the kind of record found (default false)."}
	}
	return map[string]any{"type": "function", "function": map[string]any{
		"name": t.Name, "description": t.Description,
		"parameters": map[string]any{"type": "object", "properties": props, "required": req},
	}}
}

// InputSchema is the parameters object of Function as JSON.
func (t *Tool) InputSchema() json.RawMessage {
	b, _ := json.Marshal(t.Function()["function"].(map[string]any)["parameters"])
	return b
}

func keyDescription(k string) string {
	switch k {
	case "user_id":
		return "The user's id, such as 'sara_doe_496'."
	case "order_id":
		return "The order id, such as '#W0000000' (with the leading #)."
	case "item_id":
		return "The item (product variant) id, a string of digits."
	case "product_id":
		return "The product id, a string of digits."
	case "reservation_id":
		return "The six-character reservation id, such as 'ZFA04Y'."
	case "flight_number":
		return "The flight number, such as 'HAT001'."
	case "date":
		return "The date in the format 'YYYY-MM-DD', such as '2024-05-01'."
	case "route_number":
		return "The flight's route number, such as 'HAT001'."
	case "iata":
		return "The airport's three-letter IATA code, such as 'SFO'."
	}
	return "The " + strings.ReplaceAll(k, "_", " ") + "."
}

func attrPhrases(k *Kind, attrs []string) string {
	var ps []string
	for _, a := range attrs {
		ps = append(ps, strings.TrimPrefix(k.Attr(a).Phrase, "the "))
	}
	if len(ps) == 1 {
		return "the " + ps[0]
	}
	return "the " + strings.Join(ps[:len(ps)-1], ", ") + " and " + ps[len(ps)-1]
}

func describe(k *Kind, attrs []string, selector bool) string {
	if selector {
		return fmt.Sprintf("Look up one attribute of a %s (%s): pass its %s and the field to return.", k.Noun, attrPhrases(k, attrs), strings.Join(k.Keys, " and "))
	}
	return fmt.Sprintf("Get %s of a %s by its %s.", attrPhrases(k, attrs), k.Noun, strings.Join(k.Keys, " and "))
}

// Document is stage (b): the tool document one sub-question needs
// (get_<kind>_<attr>).
func Document(w *World, q SubQuestion) Tool {
	k := w.Kind(q.Kind)
	return Tool{
		Name: "get_" + k.Name + "_" + strings.TrimPrefix(q.Attr, k.Name+"_"), Description: describe(k, []string{q.Attr}, false),
		Kind: k.Name, Attrs: []string{q.Attr}, Keys: slices.Clone(k.Keys), From: []string{q.ID},
	}
}

// Integration is stage (c)'s output for one scenario: the documents of
// stage (b) (N of them) merged into Tools (M <= N): identical documents
// become one, and the documents of one entity kind become one tool
// returning all their attributes (get_<kind>_details).
type Integration struct {
	Scenario  string `json:"scenario"`
	Documents int    `json:"n"`
	Tools     []Tool `json:"tools"`
	// ToolOf maps each sub-question id to the tool that answers it.
	ToolOf map[string]string `json:"tool_of"`
}

// Integrate is stage (c) over one scenario's documents (in sub-question
// order).
func Integrate(w *World, scenario string, docs []Tool) Integration {
	in := Integration{Scenario: scenario, Documents: len(docs), ToolOf: map[string]string{}}
	var kinds []string
	byKind := map[string][]Tool{}
	for _, d := range docs {
		if byKind[d.Kind] == nil {
			kinds = append(kinds, d.Kind)
		}
		byKind[d.Kind] = append(byKind[d.Kind], d)
	}
	for _, kn := range kinds {
		ds := byKind[kn]
		k := w.Kind(kn)
		var attrs, from []string
		for _, d := range ds {
			for _, a := range d.Attrs {
				if !slices.Contains(attrs, a) {
					attrs = append(attrs, a)
				}
			}
			from = append(from, d.From...)
		}
		t := ds[0]
		t.From = from
		if len(attrs) > 1 {
			// Keep the kind's attribute order, so the merged tool does not
			// depend on which sub-question came first.
			slices.SortFunc(attrs, func(a, b string) int {
				return slices.IndexFunc(k.Attrs, func(x Attr) bool { return x.Name == a }) -
					slices.IndexFunc(k.Attrs, func(x Attr) bool { return x.Name == b })
			})
			t.Name = "get_" + k.Name + "_details"
			t.Attrs = attrs
			t.Description = mergedDescription(k, attrs, ds)
		}
		for _, f := range from {
			in.ToolOf[f] = t.Name
		}
		in.Tools = append(in.Tools, t)
	}
	return in
}

// mergedDescription is the description of the tool merging docs (of kind
// k) into one returning attrs: the template's when every document has the
// template's own text (the offline generator); otherwise (the endpoint
// variant rewrote them) the documents' distinct descriptions in attrs'
// order, so a rewrite survives the merge.
func mergedDescription(k *Kind, attrs []string, docs []Tool) string {
	rewritten := false
	for _, d := range docs {
		if d.Description != describe(k, d.Attrs, false) {
			rewritten = true
		}
	}
	if !rewritten {
		return describe(k, attrs, false)
	}
	var parts []string
	for _, a := range attrs {
		for _, d := range docs {
			if slices.Contains(d.Attrs, a) && !slices.Contains(parts, d.Description) {
				parts = append(parts, d.Description)
			}
		}
	}
	return strings.Join(parts, " ")
}

// ScaleKind names one of complexity scaling's four transformations
// (FTRL §3.2, stage 4).
type ScaleKind string

// The scaling kinds, and Base for the integrated toolset unchanged.
const (
	Base                   ScaleKind = "base"
	FunctionGeneralization ScaleKind = "function_generalization" // a single-attribute tool becomes lookup_<kind>(keys, field)
	ParameterExpansion     ScaleKind = "parameter_expansion"     // every tool gets the optional include_kind argument
	TypeGeneralization     ScaleKind = "type_generalization"     // digit-string keys also take integers
	ToolsetExpansion       ScaleKind = "toolset_expansion"       // distractor tools no sub-question needs
	maxDistractors                   = 3
)

// ScaleKinds lists the scaling kinds in order (Base first).
var ScaleKinds = []ScaleKind{Base, FunctionGeneralization, ParameterExpansion, TypeGeneralization, ToolsetExpansion}

// Variant is stage (d)'s output: one toolset of a scenario, the Base
// toolset or one scaling kind applied to it. Changes counts what the kind
// changed (tools generalized, parameters added or widened, distractors
// added); a kind that changes nothing gives no variant.
type Variant struct {
	ID       string    `json:"id"`
	Scenario string    `json:"scenario"`
	Scale    ScaleKind `json:"scale"`
	Changes  int       `json:"changes"`
	Tools    []Tool    `json:"tools"`
	// ToolOf maps each sub-question id to the tool that answers it.
	ToolOf map[string]string `json:"tool_of"`
}

func cloneTools(ts []Tool) []Tool {
	out := make([]Tool, len(ts))
	for i, t := range ts {
		t.Attrs = slices.Clone(t.Attrs)
		t.Keys = slices.Clone(t.Keys)
		t.Optional = slices.Clone(t.Optional)
		t.Widened = slices.Clone(t.Widened)
		t.From = slices.Clone(t.From)
		out[i] = t
	}
	return out
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Scale is stage (d): the Base variant and one variant per scaling kind
// that changes something, for one scenario's integration.
func Scale(w *World, sc *Scenario, in Integration, rng *rand.Rand) []Variant {
	mk := func(kind ScaleKind) Variant {
		v := Variant{ID: sc.ID + "-" + string(kind), Scenario: sc.ID, Scale: kind, Tools: cloneTools(in.Tools), ToolOf: map[string]string{}}
		for q, t := range in.ToolOf {
			v.ToolOf[q] = t
		}
		return v
	}
	out := []Variant{mk(Base)}

	fg := mk(FunctionGeneralization)
	for i := range fg.Tools {
		t := &fg.Tools[i]
		k := w.Kind(t.Kind)
		if len(t.Attrs) != 1 || len(k.Attrs) < 2 {
			continue
		}
		old := t.Name
		t.Name = "lookup_" + k.Name
		t.Selector = true
		t.Attrs = nil
		for _, a := range k.Attrs {
			t.Attrs = append(t.Attrs, a.Name)
		}
		t.Description = describe(k, t.Attrs, true)
		for q, tn := range fg.ToolOf {
			if tn == old {
				fg.ToolOf[q] = t.Name
			}
		}
		fg.Changes++
	}
	// Two generalized tools of one kind would share a name; integration
	// already merged same-kind tools, so names stay unique.
	pe := mk(ParameterExpansion)
	for i := range pe.Tools {
		pe.Tools[i].Optional = append(pe.Tools[i].Optional, OptionalIncludeKind)
		pe.Changes++
	}
	tg := mk(TypeGeneralization)
	for i := range tg.Tools {
		t := &tg.Tools[i]
		for _, key := range t.Keys {
			numeric := len(w.Entities[t.Kind]) > 0
			ki := slices.Index(w.Kind(t.Kind).Keys, key)
			for _, e := range w.Entities[t.Kind] {
				if !allDigits(e.Key[ki]) {
					numeric = false
					break
				}
			}
			if numeric {
				t.Widened = append(t.Widened, key)
				tg.Changes++
			}
		}
	}
	te := mk(ToolsetExpansion)
	used := map[string]bool{}
	for _, t := range te.Tools {
		used[t.Name] = true
		for _, a := range t.Attrs {
			used[t.Kind+"."+a] = true
		}
	}
	var cands []Tool
	for _, k := range w.Kinds {
		for _, a := range k.Attrs {
			d := Document(w, SubQuestion{Kind: k.Name, Attr: a.Name})
			if used[k.Name+"."+a.Name] || used[d.Name] {
				continue
			}
			d.From = nil
			d.Distractor = true
			cands = append(cands, d)
		}
	}
	rng.Shuffle(len(cands), func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
	for _, d := range cands[:min(maxDistractors, len(cands))] {
		te.Tools = append(te.Tools, d)
		te.Changes++
	}
	for _, v := range []Variant{fg, pe, tg, te} {
		if v.Changes > 0 {
			out = append(out, v)
		}
	}
	return out
}
