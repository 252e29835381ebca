// Package pyvalue holds the pieces of CPython 3.11 value semantics that
// weft reproduces byte for byte: the JSON value model (Value: int vs float,
// insertion-ordered dicts, NaN), json.loads (JSONLoads, Decode) and
// json.dumps(ensure_ascii=False) (JSONDumps), str() and repr() (ToStr,
// Repr, ReprStr, FloatRepr; StrAny and ReprAny for Go-native values such as
// a tool module's dicts), round(x, n) on floats (Round), str.strip(),
// str.lstrip(chars) and str.lower() (Strip, LStripSet, Lower).
//
// It is written from the Python language reference and the json module's
// documented behaviour, not from CPython's code, and checked against
// CPython 3.11.7's own output (testdata/pyoracle, made by its gen.py).
// Users: core/train (the FTRL reward, whose Python code compares rendered
// values) and examples/modules/bfcl (BFCL's Python API classes, whose
// messages interpolate values with f-strings). Standard library only, so
// tool modules built against sdk/ can use it.
package pyvalue
