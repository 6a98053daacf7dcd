package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// decodeStrict reads one JSON object from r into v (a pointer to a struct
// of strings, bools, numbers, pointers to them, slices of them and nested
// structs), refusing
// what encoding/json lets through: unknown or repeated keys, keys in another
// case, a fraction or an out-of-range number for an integer, and anything
// after the object. Every error is a *FieldError naming the JSON path.
// null is taken as the field left out.
func decodeStrict(r io.Reader, maxBytes int64, v any) error {
	// Reading the whole body first (it is small) keeps the size check
	// exact and independent of where a syntax error happens to fall.
	body, err := io.ReadAll(io.LimitReader(r, maxBytes+1))
	if err != nil {
		return &FieldError{Message: fmt.Sprintf("reading the body: %v", err)}
	}
	if int64(len(body)) > maxBytes {
		return &FieldError{Message: fmt.Sprintf("request body exceeds %d bytes", maxBytes), Err: ErrBodyTooLarge}
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return &FieldError{Message: "empty body: want a JSON object"}
	}
	d := &strictDecoder{dec: json.NewDecoder(bytes.NewReader(body)), body: body}
	d.dec.UseNumber()
	tok, err := d.token("")
	if err != nil {
		return err
	}
	rv := reflect.ValueOf(v).Elem()
	if delim, ok := tok.(json.Delim); !ok || delim != '{' {
		return &FieldError{Message: "the body must be a JSON object, got " + describe(tok)}
	}
	if err := d.value(tok, rv, ""); err != nil {
		return err
	}
	if _, err := d.dec.Token(); err != io.EOF {
		return &FieldError{Message: fmt.Sprintf("unexpected data after the JSON object at byte %d", d.dec.InputOffset())}
	}
	return nil
}

type strictDecoder struct {
	dec  *json.Decoder
	body []byte
	// lit is the text of the last token read, as written (with the
	// separator and spaces before it): encoding/json turns bytes that are
	// not UTF-8 and unpaired surrogate escapes into U+FFFD, so only the
	// text tells a string that was not valid.
	lit []byte
}

func (d *strictDecoder) token(path string) (json.Token, error) {
	from := d.dec.InputOffset()
	tok, err := d.dec.Token()
	if err == nil {
		d.lit = d.body[from:d.dec.InputOffset()]
		return tok, nil
	}
	var syn *json.SyntaxError
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return nil, &FieldError{Field: path, Message: "malformed JSON: the body ends too soon"}
	case errors.As(err, &syn):
		return nil, &FieldError{Field: path, Message: fmt.Sprintf("malformed JSON at byte %d: %v", syn.Offset, err)}
	}
	return nil, &FieldError{Field: path, Message: fmt.Sprintf("malformed JSON: %v", err)}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// value decodes the value that starts with tok into v.
func (d *strictDecoder) value(tok json.Token, v reflect.Value, path string) error {
	if tok == nil { // null: the field left out
		v.SetZero()
		return nil
	}
	if v.Kind() == reflect.Pointer {
		p := reflect.New(v.Type().Elem())
		if err := d.value(tok, p.Elem(), path); err != nil {
			return err
		}
		v.Set(p)
		return nil
	}
	switch v.Kind() {
	case reflect.Struct:
		if delim, ok := tok.(json.Delim); !ok || delim != '{' {
			return wrongType(path, "an object", tok)
		}
		return d.object(v, path)
	case reflect.Map:
		if delim, ok := tok.(json.Delim); !ok || delim != '{' || v.Type().Key().Kind() != reflect.String {
			return wrongType(path, "an object", tok)
		}
		return d.mapObject(v, path)
	case reflect.String:
		s, ok := tok.(string)
		if !ok {
			return wrongType(path, "a string", tok)
		}
		if err := checkUTF8(d.lit); err != nil {
			return fieldErr(path, "is not valid UTF-8: %v", err)
		}
		v.SetString(s)
	case reflect.Bool:
		b, ok := tok.(bool)
		if !ok {
			return wrongType(path, "true or false", tok)
		}
		v.SetBool(b)
	case reflect.Float64:
		n, ok := tok.(json.Number)
		if !ok {
			return wrongType(path, "a number", tok)
		}
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil || math.IsInf(f, 0) {
			return fieldErr(path, "the number %s is out of range", n)
		}
		v.SetFloat(f)
	case reflect.Uint64, reflect.Uint32, reflect.Uint:
		n, ok := tok.(json.Number)
		if !ok {
			return wrongType(path, "a non-negative integer", tok)
		}
		if strings.HasPrefix(string(n), "-") {
			return fieldErr(path, "must not be negative, got %s", n)
		}
		u, err := strconv.ParseUint(string(n), 10, v.Type().Bits())
		if err != nil {
			return intErr(path, n, err)
		}
		v.SetUint(u)
	case reflect.Int, reflect.Int64, reflect.Int32:
		n, ok := tok.(json.Number)
		if !ok {
			return wrongType(path, "an integer", tok)
		}
		i, err := strconv.ParseInt(string(n), 10, v.Type().Bits())
		if err != nil {
			return intErr(path, n, err)
		}
		v.SetInt(i)
	case reflect.Slice:
		if delim, ok := tok.(json.Delim); !ok || delim != '[' {
			return wrongType(path, "an array", tok)
		}
		return d.array(v, path)
	default:
		// A type this decoder does not know is a bug in this package, not
		// in the request; say so rather than panic.
		return fieldErr(path, "cannot decode into %s", v.Type())
	}
	return nil
}

// array decodes the elements of an array whose '[' has been read; an
// element's error names the array's path.
func (d *strictDecoder) array(v reflect.Value, path string) error {
	out := reflect.MakeSlice(v.Type(), 0, 0)
	for {
		tok, err := d.token(path)
		if err != nil {
			return err
		}
		if delim, ok := tok.(json.Delim); ok && delim == ']' {
			v.Set(out)
			return nil
		}
		if tok == nil {
			return fieldErr(path, "null is not an element")
		}
		e := reflect.New(v.Type().Elem()).Elem()
		if err := d.value(tok, e, path); err != nil {
			return err
		}
		out = reflect.Append(out, e)
	}
}

func intErr(path string, n json.Number, err error) error {
	if errors.Is(err, strconv.ErrRange) {
		return fieldErr(path, "the integer %s is out of range", n)
	}
	return fieldErr(path, "expected an integer, got %s", n)
}

// object decodes the members of an object whose '{' has been read.
func (d *strictDecoder) object(v reflect.Value, path string) error {
	fields := jsonFields(v.Type())
	seen := map[string]bool{}
	for d.dec.More() {
		tok, err := d.token(path)
		if err != nil {
			return err
		}
		key, ok := tok.(string)
		if !ok {
			return fieldErr(path, "malformed JSON: expected a key, got %s", describe(tok))
		}
		at := join(path, key)
		i, ok := fields[key]
		if !ok {
			return fieldErr(at, "unknown field %q", key)
		}
		if seen[key] {
			return fieldErr(at, "given more than once")
		}
		seen[key] = true
		tok, err = d.token(at)
		if err != nil {
			return err
		}
		if err := d.value(tok, v.Field(i), at); err != nil {
			return err
		}
	}
	_, err := d.token(path) // the closing '}'
	return err
}

// mapObject decodes the members of an object whose '{' has been read into
// v, a map with string keys (the spec's headers); a key given twice is
// refused, as in a struct.
func (d *strictDecoder) mapObject(v reflect.Value, path string) error {
	m := reflect.MakeMap(v.Type())
	for d.dec.More() {
		tok, err := d.token(path)
		if err != nil {
			return err
		}
		key, ok := tok.(string)
		if !ok {
			return fieldErr(path, "malformed JSON: expected a key, got %s", describe(tok))
		}
		at := join(path, key)
		if m.MapIndex(reflect.ValueOf(key)).IsValid() {
			return fieldErr(at, "given more than once")
		}
		if tok, err = d.token(at); err != nil {
			return err
		}
		if tok == nil {
			return fieldErr(at, "null is not a value: leave the key out")
		}
		elem := reflect.New(v.Type().Elem()).Elem()
		if err := d.value(tok, elem, at); err != nil {
			return err
		}
		m.SetMapIndex(reflect.ValueOf(key).Convert(v.Type().Key()), elem)
	}
	if _, err := d.token(path); err != nil { // the closing '}'
		return err
	}
	v.Set(m)
	return nil
}

// jsonFields maps the JSON names of a struct's exported fields to their
// index; names match exactly (encoding/json would also take "Target").
func jsonFields(t reflect.Type) map[string]int {
	m := make(map[string]int, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		m[name] = i
	}
	return m
}

func wrongType(path, want string, tok json.Token) error {
	if _, text := tok.(string); text {
		if hint := unitHint(path, want); hint != "" {
			return fieldErr(path, "expected %s, got %s: %s", want, describe(tok), hint)
		}
	}
	return fieldErr(path, "expected %s, got %s", want, describe(tok))
}

// unitHint is what to write in a field whose name carries its unit
// (request_timeout_ms) when it was given text, likely a duration ("2s") as
// the CLI's flags take: "" for other fields. want is what the field takes
// ("a number" for a float, an integer otherwise).
func unitHint(path, want string) string {
	noun := "a whole number"
	if want == "a number" {
		noun = "a number"
	}
	for _, u := range []struct{ suffix, unit, example string }{
		{"_ms", "milliseconds", "2000 for 2s"},
		{"_us", "microseconds", "2000 for 2ms"},
		{"_ns", "nanoseconds", "2000000 for 2ms"},
	} {
		if strings.HasSuffix(path, u.suffix) {
			return noun + " of " + u.unit + " is expected, e.g. " + u.example
		}
	}
	return ""
}

// describe names a token's JSON type for a message, quoting short strings
// so "NaN" or "100" given as text reads as what it is.
func describe(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			return "an object"
		}
		if t == '[' {
			return "an array"
		}
		return fmt.Sprintf("%q", string(t))
	case string:
		if len(t) > 32 {
			t = t[:32] + "…"
		}
		return fmt.Sprintf("the string %q", t)
	case bool:
		return fmt.Sprintf("the boolean %v", t)
	case json.Number:
		return "the number " + string(t)
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", tok)
}

// checkUTF8 checks the text of a JSON string literal (lit may begin with a
// separator and spaces): its bytes are UTF-8 and every \u escape of a
// surrogate is half of a pair, as RFC 8259 asks and encoding/json does not
// enforce.
func checkUTF8(lit []byte) error {
	if !utf8.Valid(lit) {
		return errors.New("the string holds bytes that are not UTF-8")
	}
	lit = bytes.TrimLeft(lit, " \t\r\n:,")
	surrogate := func(i int) (rune, bool) {
		if i+6 > len(lit) || lit[i] != '\\' || lit[i+1] != 'u' {
			return 0, false
		}
		r, err := strconv.ParseUint(string(lit[i+2:i+6]), 16, 16)
		return rune(r), err == nil && utf16.IsSurrogate(rune(r))
	}
	for i := 0; i < len(lit); i++ {
		if lit[i] != '\\' {
			continue
		}
		r, ok := surrogate(i)
		switch {
		case !ok:
			i++ // a two-character escape, or \u of a character: skip its letter
		case r >= 0xdc00:
			return fmt.Errorf("the escape %s is the second half of a surrogate pair, alone", lit[i:i+6])
		default:
			if r2, ok := surrogate(i + 6); !ok || r2 < 0xdc00 {
				return fmt.Errorf("the escape %s is the first half of a surrogate pair, alone", lit[i:i+6])
			}
			i += 11
		}
	}
	return nil
}
