package moduletest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// dupKey is a key given twice in one JSON object of a cases file: path is
// where the object is (keys and array indexes from the top, e.g. "cases", 0,
// "calls", 1), key the repeated key and line/col (1-based, col in bytes) where
// its second occurrence starts.
type dupKey struct {
	path      []any
	key       string
	line, col int
}

// findDupKey walks data (valid JSON) and returns the first key repeated in
// one object, or nil. encoding/json keeps the last value of a repeated key
// silently, so a case with "calls" twice would check only the last one.
func findDupKey(data []byte) (*dupKey, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var walk func(path []any) (*dupKey, error)
	walk = func(path []any) (*dupKey, error) {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				start := keyStart(data, dec.InputOffset())
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k := kt.(string)
				if seen[k] {
					line, col := position(data, start)
					return &dupKey{path: path, key: k, line: line, col: col}, nil
				}
				seen[k] = true
				if d, err := walk(append(path[:len(path):len(path)], k)); d != nil || err != nil {
					return d, err
				}
			}
			_, err := dec.Token() // '}'
			return nil, err
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				if d, err := walk(append(path[:len(path):len(path)], i)); d != nil || err != nil {
					return d, err
				}
			}
			_, err := dec.Token() // ']'
			return nil, err
		}
		return nil, nil
	}
	return walk(nil)
}

// keyStart skips the whitespace and comma after offset: where the next key
// starts.
func keyStart(data []byte, off int64) int {
	i := int(off)
	for i < len(data) && strings.IndexByte(" \t\r\n,", data[i]) >= 0 {
		i++
	}
	return i
}

// position turns a byte offset into a 1-based line and column.
func position(data []byte, off int) (line, col int) {
	line = 1 + bytes.Count(data[:off], []byte("\n"))
	return line, off - bytes.LastIndexByte(data[:off], '\n')
}

// dupKeyError names a repeated key with the case (index and id) and call it
// is in and, below those, the path of keys to its object.
func dupKeyError(d *dupKey, f *File) error {
	where := "the file"
	rest := d.path
	if len(rest) >= 2 && rest[0] == "cases" {
		if i, ok := rest[1].(int); ok {
			id := ""
			if i < len(f.Cases) {
				id = f.Cases[i].ID
			}
			where = fmt.Sprintf("case %d (%q)", i, id)
			rest = rest[2:]
			if len(rest) >= 2 && rest[0] == "calls" {
				if j, ok := rest[1].(int); ok {
					where += fmt.Sprintf(" call %d", j)
					rest = rest[2:]
				}
			}
		}
	}
	for _, p := range rest {
		switch p := p.(type) {
		case string:
			where += " " + strconv.Quote(p)
		case int:
			where += fmt.Sprintf(" [%d]", p)
		}
	}
	return fmt.Errorf("moduletest: %s: duplicate key %q at line %d, column %d (a key may appear once in an object; JSON decoders keep only the last value)", where, d.key, d.line, d.col)
}
