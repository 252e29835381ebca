package tool

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

type schemaInner struct {
	X int `json:"x"`
}

type schemaBase struct {
	ID     string `json:"id" description:"the id"`
	Shadow string `json:"shadow"`
}

type schemaRecursive struct {
	Name     string            `json:"name"`
	Children []schemaRecursive `json:"children,omitempty"`
}

type upper string

func (u upper) MarshalText() ([]byte, error) { return []byte(strings.ToUpper(string(u))), nil }

type schemaAll struct {
	schemaBase
	Shadow   int             `json:"shadow"` // shadows schemaBase.Shadow
	S        string          `json:"s" description:"a \"string\" <b>"`
	B        bool            `json:"b"`
	I        int64           `json:"i"`
	U        uint8           `json:"u"`
	F        float64         `json:"f"`
	Opt      string          `json:"opt,omitempty"`
	Zero     int             `json:"zero,omitzero"`
	P        *int            `json:"p"`
	Strs     []string        `json:"strs"`
	Bytes    []byte          `json:"bytes"`
	Arr      [2]float32      `json:"arr"`
	M        map[string]int  `json:"m"`
	IntKeys  map[int]bool    `json:"int_keys"`
	Inner    schemaInner     `json:"inner"`
	PInner   *schemaInner    `json:"p_inner"`
	Any      any             `json:"any" description:"anything"`
	Raw      json.RawMessage `json:"raw"`
	T        time.Time       `json:"t"`
	Text     upper           `json:"text"`
	Quoted   int             `json:"quoted,string"`
	Untagged string
	Rec      schemaRecursive `json:"rec"`
	Nested   [][]schemaInner `json:"nested"`
	Skip     string          `json:"-"`
	//lint:ignore U1000 an unexported field, which the schema must skip
	private  string
	MapOfPtr map[string]*int32 `json:"map_of_ptr"`
}

func TestInputSchema(t *testing.T) {
	tests := []struct {
		typ  reflect.Type
		want string
	}{
		{reflect.TypeFor[struct{}](), `{"type":"object","properties":{},"additionalProperties":false}`},
		{reflect.TypeFor[*schemaInner](), `{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"],"additionalProperties":false}`},
		{reflect.TypeFor[map[string]string](), `{"type":"object","additionalProperties":{"type":"string"}}`},
		{reflect.TypeFor[any](), `{"type":"object"}`},
		{reflect.TypeFor[json.RawMessage](), `{"type":"object"}`},
		{reflect.TypeFor[schemaAll](), `{"type":"object","properties":{` +
			`"id":{"type":"string","description":"the id"},` +
			`"shadow":{"type":"integer"},` +
			`"s":{"type":"string","description":"a \"string\" <b>"},` +
			`"b":{"type":"boolean"},` +
			`"i":{"type":"integer"},` +
			`"u":{"type":"integer","minimum":0},` +
			`"f":{"type":"number"},` +
			`"opt":{"type":"string"},` +
			`"zero":{"type":"integer"},` +
			`"p":{"type":["integer","null"]},` +
			`"strs":{"type":"array","items":{"type":"string"}},` +
			`"bytes":{"type":"string","contentEncoding":"base64"},` +
			`"arr":{"type":"array","items":{"type":"number"},"minItems":2,"maxItems":2},` +
			`"m":{"type":"object","additionalProperties":{"type":"integer"}},` +
			`"int_keys":{"type":"object","additionalProperties":{"type":"boolean"}},` +
			`"inner":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"],"additionalProperties":false},` +
			`"p_inner":{"type":["object","null"],"properties":{"x":{"type":"integer"}},"required":["x"],"additionalProperties":false},` +
			`"any":{"description":"anything"},` +
			`"raw":{},` +
			`"t":{"type":"string","format":"date-time"},` +
			`"text":{"type":"string"},` +
			`"quoted":{"type":"string"},` +
			`"Untagged":{"type":"string"},` +
			`"rec":{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{}}},"required":["name"],"additionalProperties":false},` +
			`"nested":{"type":"array","items":{"type":"array","items":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"],"additionalProperties":false}}},` +
			`"map_of_ptr":{"type":"object","additionalProperties":{"type":["integer","null"]}}` +
			`},"required":["id","shadow","s","b","i","u","f","strs","bytes","arr","m","int_keys","inner","any","raw","t","text","quoted","Untagged","rec","nested","map_of_ptr"],"additionalProperties":false}`},
	}
	for _, tc := range tests {
		got, err := inputSchema(tc.typ)
		if err != nil {
			t.Fatalf("%s: %v", tc.typ, err)
		}
		if string(got) != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.typ, got, tc.want)
		}
		if !json.Valid(got) {
			t.Errorf("%s: invalid JSON", tc.typ)
		}
		again, _ := inputSchema(tc.typ)
		if string(again) != string(got) {
			t.Errorf("%s: not deterministic", tc.typ)
		}
	}
}

func TestOutputSchema(t *testing.T) {
	type out struct {
		Names []string          `json:"names"`
		M     map[string]string `json:"m,omitempty"`
		P     *schemaInner      `json:"p"`
		Data  []byte            `json:"data"`
		Arr   [1]int            `json:"arr"`
	}
	tests := []struct {
		typ  reflect.Type
		want string // "" = no output schema
	}{
		{reflect.TypeFor[out](), `{"type":"object","properties":{` +
			`"names":{"type":["array","null"],"items":{"type":"string"}},` +
			`"m":{"type":["object","null"],"additionalProperties":{"type":"string"}},` +
			`"p":{"type":["object","null"],"properties":{"x":{"type":"integer"}},"required":["x"],"additionalProperties":false},` +
			`"data":{"type":["string","null"],"contentEncoding":"base64"},` +
			`"arr":{"type":"array","items":{"type":"integer"},"minItems":1,"maxItems":1}` +
			`},"required":["names","data","arr"],"additionalProperties":false}`},
		{reflect.TypeFor[*schemaInner](), `{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"],"additionalProperties":false}`},
		{reflect.TypeFor[map[string]any](), `{"type":"object","additionalProperties":{}}`},
		{reflect.TypeFor[string](), ""},
		{reflect.TypeFor[any](), ""},
		{reflect.TypeFor[[]schemaInner](), ""},
		{reflect.TypeFor[time.Time](), ""},
		{reflect.TypeFor[int](), ""},
	}
	for _, tc := range tests {
		got, err := outputSchema(tc.typ)
		if err != nil {
			t.Fatalf("%s: %v", tc.typ, err)
		}
		if string(got) != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.typ, got, tc.want)
		}
	}
}

func TestSchemaErrors(t *testing.T) {
	type badField struct {
		C chan int `json:"c"`
	}
	type badKey struct {
		M map[[2]int]string `json:"m"`
	}
	for _, tc := range []struct {
		typ  reflect.Type
		want string
	}{
		{reflect.TypeFor[string](), "must be a struct or a map"},
		{reflect.TypeFor[[]int](), "must be a struct or a map"},
		{reflect.TypeFor[badField](), "field C: chan int: unsupported type"},
		{reflect.TypeFor[badKey](), "map keys must be strings or integers"},
	} {
		_, err := inputSchema(tc.typ)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.typ, err, tc.want)
		}
	}
	if _, err := outputSchema(reflect.TypeFor[func()]()); err == nil {
		t.Error("func output: no error")
	}
}

func TestEmbeddedConflicts(t *testing.T) {
	type A struct {
		Name string
		X    int
	}
	type B struct {
		Name string
		Y    int `json:"X"` // tagged: wins over the untagged A.X
	}
	type both struct {
		A
		B
	}
	got, err := inputSchema(reflect.TypeFor[both]())
	if err != nil {
		t.Fatal(err)
	}
	// "Name" is ambiguous (two untagged at depth 1) and dropped, as
	// encoding/json does; "X" goes to the tagged B.Y.
	want := `{"type":"object","properties":{"X":{"type":"integer"}},"required":["X"],"additionalProperties":false}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	b, _ := json.Marshal(both{A{"a", 1}, B{"b", 3}})
	if string(b) != `{"X":3}` {
		t.Errorf("encoding/json disagrees: %s", b)
	}
}
