package widget

import (
	"encoding/json"
	"reflect"
	"testing"
)

type shapeInner struct {
	A string `json:"a"`
}

type shapeSelf struct{ v string }

func (s *shapeSelf) UnmarshalJSON(b []byte) error { s.v = string(b); return nil }

type shapeBody struct {
	shapeInner
	B     *int                  `json:"b"`
	Items []struct{ X int }     `json:"items"`
	ByKey map[string]clientBody `json:"by_key"`
	Any   any                   `json:"any"`
	Self  shapeSelf             `json:"self"`
	Skip  string                `json:"-"`
}

var _ json.Unmarshaler = (*shapeSelf)(nil)

// TestCheckShape: every key of a body is its object's field, spelt as the
// API spells it, once; the first that is not is named by its path.
func TestCheckShape(t *testing.T) {
	for _, c := range []struct {
		body, path, why string
	}{
		{`{"a": "x", "b": 1}`, "", ""},                 // an embedded struct's field is its own
		{`{"c": 1}`, "c", "unknown field"},             //
		{`{"B": 1}`, "B", "unknown field"},             // other letters
		{`{"b": 1, "b": 2}`, "b", "given twice"},       //
		{`{"b": null, "b": null}`, "b", "given twice"}, //
		{`{"items": [{"X": 1}, {"Y": 2}]}`, "items[1].Y", "unknown field"},
		{`{"items": [{"X": 1, "X": 2}]}`, "items[0].X", "given twice"},
		{`{"by_key": {"k": {"name": "A", "nmae": "B"}}}`, "by_key.k.nmae", "unknown field"}, // a map's values
		{`{"any": {"whatever": {"goes": 1}}}`, "", ""},                                      // any shape
		{`{"self": {"its": "own"}}`, "", ""},                                                // a type that reads itself
		{`{"Skip": 1}`, "Skip", "unknown field"},                                            // json:"-"
		{`[1, 2]`, "", ""},                                                                  // not an object: the decoder says so
		{`{}`, "", ""},
	} {
		se := checkShape([]byte(c.body), reflect.TypeFor[*shapeBody]())
		switch {
		case c.path == "" && se != nil:
			t.Errorf("%s: refused %+v", c.body, *se)
		case c.path != "" && (se == nil || se.path != c.path || se.why != c.why):
			t.Errorf("%s: %+v, want %s %s", c.body, se, c.path, c.why)
		}
	}
}
