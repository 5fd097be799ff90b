package widget

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
)

// shapeError is a key of a request's JSON that the API does not take: not
// one of its object's fields as the API spells them, or given twice.
type shapeError struct {
	path string // as the API's field errors name fields: client.name, items[1].service_id
	why  string // an i18n key
}

// checkShape checks every object key of body, a JSON value, against
// the type t it is read into: each must be a field of its object, spelt
// exactly as the API spells it (encoding/json would take "PAY_WITH" for
// pay_with), and given once (it would take the last of two). It returns
// the first key that is not (nil: none). Values of the wrong kind, and
// malformed JSON (the walk stops there), are left to the decoder, which
// names them.
func checkShape(body []byte, t reflect.Type) *shapeError {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	se, _ := walkShape(dec, t, "")
	return se
}

// walkShape reads one value from dec, checking it against t (nil: any
// shape), at path. A decoding error ends the walk (the decoder proper
// reports it).
func walkShape(dec *json.Decoder, t reflect.Type, path string) (*shapeError, error) {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil, nil // a scalar
	}
	switch d {
	case '[':
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := 0; dec.More(); i++ {
			if se, err := walkShape(dec, elem, path+"["+strconv.Itoa(i)+"]"); se != nil || err != nil {
				return se, err
			}
		}
	case '{':
		// A struct's keys are its fields; a map's, any (its values have
		// its values' shape).
		fields, values := objectFields(t), reflect.Type(nil)
		if t != nil && t.Kind() == reflect.Map && !reads(t) {
			values = t.Elem()
		}
		seen := map[string]bool{}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return nil, err
			}
			key, _ := tok.(string)
			at := key
			if path != "" {
				at = path + "." + key
			}
			ft, known := fields[key]
			if fields == nil {
				ft = values
			}
			switch {
			case fields != nil && !known:
				return &shapeError{at, "unknown field"}, nil
			case seen[key]:
				return &shapeError{at, "given twice"}, nil
			}
			seen[key] = true
			if se, err := walkShape(dec, ft, at); se != nil || err != nil {
				return se, err
			}
		}
	}
	_, err = dec.Token() // (the closing delimiter)
	return nil, err
}

// objectFields are the JSON fields of struct type t, by the names the API
// spells them with, and their types, an embedded struct's with them (nil:
// t is not a struct, or reads itself, whose keys are not checked).
func objectFields(t reflect.Type) map[string]reflect.Type {
	if t == nil || t.Kind() != reflect.Struct || reads(t) {
		return nil
	}
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		et := f.Type
		for et.Kind() == reflect.Pointer {
			et = et.Elem()
		}
		if !f.IsExported() && !(f.Anonymous && et.Kind() == reflect.Struct) {
			continue // (an unexported embedded struct's fields are promoted)
		}
		switch {
		case name == "-":
			continue
		case name == "" && f.Anonymous && et.Kind() == reflect.Struct:
			for k, v := range objectFields(et) {
				if _, ok := out[k]; !ok { // (the outer struct's own win)
					out[k] = v
				}
			}
			continue
		case name == "":
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// reads reports whether t decodes itself from JSON (its keys are its own).
func reads(t reflect.Type) bool {
	u := reflect.TypeFor[json.Unmarshaler]()
	return t.Implements(u) || reflect.PointerTo(t).Implements(u)
}
