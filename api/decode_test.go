package api

import (
	"errors"
	"strings"
	"testing"
)

func TestDecodeProbeRequest(t *testing.T) {
	cases := []struct {
		body, field string
	}{
		{`{"target": "http://h:1", "model": "m", "model_version": "1"}`, ""},
		{`{"target": "grpc://h:1"}`, ""},
		{`{"model": "m"}`, "target"},
		{`{"target": "http://h"}`, "target"},
		{`{"target": "http://h:1", "scenario": "Server"}`, "scenario"},
	}
	for _, c := range cases {
		_, err := DecodeProbeRequest(strings.NewReader(c.body), Limits{})
		var fe *FieldError
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%s: %v", c.body, err)
		case c.field != "" && (!errors.As(err, &fe) || fe.Field != c.field):
			t.Errorf("%s: got %v, want a FieldError on %s", c.body, err, c.field)
		}
	}
}
