package tool

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"
)

// schemaNode is a JSON Schema (draft 2020-12) in a fixed key order, so that
// schemas encode deterministically.
type schemaNode struct {
	Type                 any         `json:"type,omitempty"` // string, or []string with "null"
	Description          string      `json:"description,omitempty"`
	Format               string      `json:"format,omitempty"`
	ContentEncoding      string      `json:"contentEncoding,omitempty"`
	Minimum              *int        `json:"minimum,omitempty"`
	Properties           *properties `json:"properties,omitempty"`
	Required             []string    `json:"required,omitempty"`
	AdditionalProperties any         `json:"additionalProperties,omitempty"` // false or *schemaNode
	Items                *schemaNode `json:"items,omitempty"`
	MinItems             *int        `json:"minItems,omitempty"`
	MaxItems             *int        `json:"maxItems,omitempty"`
}

type property struct {
	name string
	node *schemaNode
}

// properties is a JSON object keeping the struct field order.
type properties []property

func (ps properties) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, p := range ps {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, err := marshal(p.name)
		if err != nil {
			return nil, err
		}
		v, err := marshal(p.node)
		if err != nil {
			return nil, err
		}
		buf.Write(k)
		buf.WriteByte(':')
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

var (
	rawMessageType      = reflect.TypeFor[json.RawMessage]()
	timeType            = reflect.TypeFor[time.Time]()
	jsonMarshalerType   = reflect.TypeFor[json.Marshaler]()
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textMarshalerType   = reflect.TypeFor[encoding.TextMarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// customJSON reports whether t encodes or decodes itself as JSON.
func customJSON(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return t.Implements(jsonMarshalerType) || pt.Implements(jsonMarshalerType) || pt.Implements(jsonUnmarshalerType)
}

// customText reports whether t encodes or decodes itself as a JSON string.
func customText(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return t.Implements(textMarshalerType) || pt.Implements(textMarshalerType) || pt.Implements(textUnmarshalerType)
}

// inputSchema is the JSON Schema of a tool's arguments: always an object.
func inputSchema(t reflect.Type) (json.RawMessage, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var n *schemaNode
	switch {
	case t == rawMessageType || t.Kind() == reflect.Interface:
		n = &schemaNode{Type: "object"}
	case t.Kind() == reflect.Struct && t != timeType && !customJSON(t) && !customText(t),
		t.Kind() == reflect.Map && !customJSON(t):
		var err error
		if n, err = schemaOf(t, false, map[reflect.Type]bool{}); err != nil {
			return nil, err
		}
		n.Type = "object" // never nullable at the top
	default:
		return nil, fmt.Errorf("%s: the arguments type must be a struct or a map", t)
	}
	return marshal(n)
}

// outputSchema is the JSON Schema of a tool's structuredContent, or nil when
// the result is not an object (Out is not a struct or map).
func outputSchema(t reflect.Type) (json.RawMessage, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == timeType || customJSON(t) || customText(t) || (t.Kind() != reflect.Struct && t.Kind() != reflect.Map) {
		// Still reject what encoding/json cannot encode at all.
		if _, err := schemaOf(t, true, map[reflect.Type]bool{}); err != nil {
			return nil, err
		}
		return nil, nil
	}
	n, err := schemaOf(t, true, map[reflect.Type]bool{})
	if err != nil {
		return nil, err
	}
	n.Type = "object"
	return marshal(n)
}

func intp(i int) *int { return &i }

// nullable lets n also accept null.
func nullable(n *schemaNode) *schemaNode {
	switch t := n.Type.(type) {
	case string:
		n.Type = []string{t, "null"}
	}
	return n
}

// schemaOf describes values of t. output: the schema describes what
// encoding/json writes, so nil slices and maps are null. seen holds the
// structs being described, to stop at recursion.
func schemaOf(t reflect.Type, output bool, seen map[reflect.Type]bool) (*schemaNode, error) {
	switch {
	case t == rawMessageType:
		return &schemaNode{}, nil
	case t == timeType:
		return &schemaNode{Type: "string", Format: "date-time"}, nil
	case t.Kind() == reflect.Pointer:
		n, err := schemaOf(t.Elem(), output, seen)
		if err != nil {
			return nil, err
		}
		return nullable(n), nil
	case customJSON(t):
		return &schemaNode{}, nil
	case customText(t):
		return &schemaNode{Type: "string"}, nil
	}
	switch t.Kind() {
	case reflect.Bool:
		return &schemaNode{Type: "boolean"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return &schemaNode{Type: "integer"}, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return &schemaNode{Type: "integer", Minimum: intp(0)}, nil
	case reflect.Float32, reflect.Float64:
		return &schemaNode{Type: "number"}, nil
	case reflect.String:
		return &schemaNode{Type: "string"}, nil
	case reflect.Interface:
		return &schemaNode{}, nil
	case reflect.Slice:
		var n *schemaNode
		if t.Elem().Kind() == reflect.Uint8 && !customJSON(t.Elem()) && !customText(t.Elem()) {
			n = &schemaNode{Type: "string", ContentEncoding: "base64"}
		} else {
			items, err := schemaOf(t.Elem(), output, seen)
			if err != nil {
				return nil, err
			}
			n = &schemaNode{Type: "array", Items: items}
		}
		if output {
			nullable(n)
		}
		return n, nil
	case reflect.Array:
		items, err := schemaOf(t.Elem(), output, seen)
		if err != nil {
			return nil, err
		}
		return &schemaNode{Type: "array", Items: items, MinItems: intp(t.Len()), MaxItems: intp(t.Len())}, nil
	case reflect.Map:
		switch t.Key().Kind() {
		case reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		default:
			if !t.Key().Implements(textMarshalerType) {
				return nil, fmt.Errorf("%s: map keys must be strings or integers", t)
			}
		}
		elem, err := schemaOf(t.Elem(), output, seen)
		if err != nil {
			return nil, err
		}
		n := &schemaNode{Type: "object", AdditionalProperties: elem}
		if output {
			nullable(n)
		}
		return n, nil
	case reflect.Struct:
		return structSchema(t, output, seen)
	}
	return nil, fmt.Errorf("%s: unsupported type (kind %s)", t, t.Kind())
}

func structSchema(t reflect.Type, output bool, seen map[reflect.Type]bool) (*schemaNode, error) {
	if seen[t] {
		return &schemaNode{}, nil // recursion: any value
	}
	seen[t] = true
	defer delete(seen, t)
	n := &schemaNode{Type: "object", Properties: &properties{}, AdditionalProperties: false}
	for _, f := range jsonFields(t) {
		var p *schemaNode
		if f.asString && isScalar(f.typ) {
			p = &schemaNode{Type: "string"}
		} else {
			var err error
			if p, err = schemaOf(f.typ, output, seen); err != nil {
				return nil, fmt.Errorf("field %s: %w", f.goName, err)
			}
		}
		p.Description = f.description
		*n.Properties = append(*n.Properties, property{f.name, p})
		if !f.omit && f.typ.Kind() != reflect.Pointer {
			n.Required = append(n.Required, f.name)
		}
	}
	return n, nil
}

func isScalar(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.String, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return false
}

// jsonField is a struct field as encoding/json sees it.
type jsonField struct {
	name        string // JSON name
	goName      string
	typ         reflect.Type
	depth       int
	tagged      bool // name from the json tag
	omit        bool // omitempty or omitzero
	asString    bool // ,string
	description string
}

// jsonFields lists the fields encoding/json encodes for struct t, in its
// order, with embedded structs' fields promoted and conflicts resolved as
// encoding/json does (shallowest wins, then the tagged one, else none).
func jsonFields(t reflect.Type) []jsonField {
	var all []jsonField
	collectFields(t, 0, map[reflect.Type]bool{t: true}, &all)
	count := map[string]int{}
	best := map[string]jsonField{}
	for _, f := range all {
		b, ok := best[f.name]
		switch {
		case !ok || f.depth < b.depth:
			best[f.name], count[f.name] = f, 1
		case f.depth == b.depth:
			if f.tagged && !b.tagged {
				best[f.name], count[f.name] = f, 1
			} else if f.tagged == b.tagged {
				count[f.name]++
			}
		}
	}
	var out []jsonField
	for _, f := range all {
		b := best[f.name]
		if count[f.name] == 1 && b.depth == f.depth && b.goName == f.goName && b.tagged == f.tagged {
			out = append(out, f)
			count[f.name] = 0 // once
		}
	}
	return out
}

func collectFields(t reflect.Type, depth int, visited map[reflect.Type]bool, out *[]jsonField) {
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if sf.Anonymous {
			ft := sf.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if !sf.IsExported() && ft.Kind() != reflect.Struct {
				continue
			}
			if name == "" && ft.Kind() == reflect.Struct {
				if !visited[ft] {
					visited[ft] = true
					collectFields(ft, depth+1, visited, out)
					delete(visited, ft)
				}
				continue
			}
		} else if !sf.IsExported() {
			continue
		}
		f := jsonField{name: name, goName: sf.Name, typ: sf.Type, depth: depth, tagged: name != "", description: sf.Tag.Get("description")}
		if name == "" {
			f.name = sf.Name
		}
		for opts != "" {
			var o string
			o, opts, _ = strings.Cut(opts, ",")
			switch o {
			case "omitempty", "omitzero":
				f.omit = true
			case "string":
				f.asString = true
			}
		}
		*out = append(*out, f)
	}
}
