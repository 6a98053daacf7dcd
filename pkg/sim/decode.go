package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// specFile is the form of a model file: {"models": [spec, ...]}.
type specFile struct {
	Models []json.RawMessage `json:"models"`
}

// LoadFile reads model specs from a JSON or YAML file (by extension: .json,
// .yaml, .yml; otherwise by its first byte) and validates them.
func LoadFile(path string) ([]ModelSpec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	var specs []ModelSpec
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		specs, err = DecodeJSON(data)
	case ".yaml", ".yml":
		specs, err = DecodeYAML(data)
	default:
		specs, err = Decode(data)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return specs, nil
}

// Decode reads model specs as JSON when the first non-blank byte is '{',
// else as YAML.
func Decode(data []byte) ([]ModelSpec, error) {
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' {
		return DecodeJSON(data)
	}
	return DecodeYAML(data)
}

// DecodeYAML reads model specs from YAML, converted to JSON and decoded as
// strictly as DecodeJSON.
func DecodeYAML(data []byte) ([]ModelSpec, error) {
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	return DecodeJSON(j)
}

// DecodeJSON reads {"models": [...]} strictly: an unknown field, a value of
// the wrong type or a spec that fails Validate is an error naming the model
// and the field's path.
func DecodeJSON(data []byte) ([]ModelSpec, error) {
	var f specFile
	if err := strictDecode(data, reflect.ValueOf(&f).Elem(), ""); err != nil {
		return nil, fmt.Errorf("sim: model file: %w", err)
	}
	if len(f.Models) == 0 {
		return nil, errors.New(`sim: model file: "models" lists no model`)
	}
	specs := make([]ModelSpec, len(f.Models))
	for i, raw := range f.Models {
		if err := strictDecode(raw, reflect.ValueOf(&specs[i]).Elem(), ""); err != nil {
			return nil, fmt.Errorf("sim: model %s: %w", modelLabel(raw, i), err)
		}
		if err := specs[i].Validate(); err != nil {
			return nil, err
		}
	}
	return specs, nil
}

// modelLabel names a model that failed to decode by its name, if that much
// decodes, and its position.
func modelLabel(raw json.RawMessage, i int) string {
	var n struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(raw, &n) == nil && n.Name != "" {
		return fmt.Sprintf("%q (models[%d])", n.Name, i)
	}
	return fmt.Sprintf("models[%d]", i)
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// strictDecode decodes data into v, refusing unknown fields like
// json.Decoder.DisallowUnknownFields, but walking the structure itself so
// that every error carries the full path of the field (latency.samples[2]);
// encoding/json names only the last key, and nothing at all for errors of a
// custom UnmarshalJSON.
func strictDecode(data []byte, v reflect.Value, path string) error {
	if v.CanAddr() && v.Addr().Type().Implements(unmarshalerType) {
		return leafDecode(data, v, path)
	}
	switch v.Kind() {
	case reflect.Pointer:
		if string(bytes.TrimSpace(data)) == "null" {
			v.SetZero()
			return nil
		}
		p := reflect.New(v.Type().Elem())
		if err := strictDecode(data, p.Elem(), path); err != nil {
			return err
		}
		v.Set(p)
		return nil
	case reflect.Struct:
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(data, &obj); err != nil || obj == nil {
			return fieldError(path, "want an object, got %s", abbrev(data))
		}
		fields := jsonFields(v.Type())
		// Sorted, so that a spec with several mistakes always reports the same one.
		for _, key := range slices.Sorted(maps.Keys(obj)) {
			raw := obj[key]
			idx, ok := fields[key]
			if !ok {
				return fieldError(join(path, key), "unknown field")
			}
			if err := strictDecode(raw, v.Field(idx), join(path, key)); err != nil {
				return err
			}
		}
		return nil
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 { // []byte, RawMessage
			return leafDecode(data, v, path)
		}
		var items []json.RawMessage
		if err := json.Unmarshal(data, &items); err != nil {
			return fieldError(path, "want a list, got %s", abbrev(data))
		}
		s := reflect.MakeSlice(v.Type(), len(items), len(items))
		for i, raw := range items {
			if err := strictDecode(raw, s.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		v.Set(s)
		return nil
	}
	return leafDecode(data, v, path)
}

func leafDecode(data []byte, v reflect.Value, path string) error {
	err := json.Unmarshal(data, v.Addr().Interface())
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &te):
		return fieldError(path, "want %s, got %s", te.Type, abbrev(data))
	}
	return fieldError(path, "%v", err)
}

// jsonFields maps a struct's JSON keys to field indices.
func jsonFields(t reflect.Type) map[string]int {
	m := make(map[string]int, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		m[name] = i
	}
	return m
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func abbrev(data []byte) string {
	s := string(bytes.TrimSpace(data))
	if len(s) > 40 {
		s = s[:37] + "..."
	}
	return s
}

// fieldError is an error about one field of a spec.
func fieldError(path, format string, args ...any) error {
	if path == "" {
		return fmt.Errorf(format, args...)
	}
	return fmt.Errorf("%s: %s", path, fmt.Sprintf(format, args...))
}
