package api

import (
	"errors"
	"strings"
	"testing"
)

// TestDecodeHeaders: the headers object decodes strictly, and a bad name,
// a name twice, a value that cannot be sent or the placeholder of a hidden
// value are refused naming the field, never quoting a value.
func TestDecodeHeaders(t *testing.T) {
	const base = `{"target":"http://h:1","model":"m","scenario":"Server","headers":`
	s, err := DecodeRunSpec(strings.NewReader(base+`{"Authorization":"Bearer x","Host":"a.example.com","X-K":"@env:K"}}`), Limits{})
	if err != nil || len(s.Headers) != 3 || s.Headers["X-K"] != "@env:K" {
		t.Fatalf("%+v, %v", s.Headers, err)
	}
	if got := ShownHeaders(s.Headers); got["Authorization"] != "<redacted>" || got["Host"] != "<redacted>" || got["X-K"] != "@env:K" {
		t.Errorf("shown %v", got)
	}
	for body, want := range map[string]string{
		`{"Content-Length":"1"}`:    "Content-Length is written by the client itself",
		`{":authority":"x"}`:        "pseudo-header",
		`{"X-A":"1","x-a":"2"}`:     "name the same header",
		`{"X-A":"1","X-A":"2"}`:     "given more than once",
		`{"X-A":"line\nX-Evil: 1"}`: "byte 0x0a",
		`{"X-A":"<redacted>"}`:      "what a hidden value is shown as",
		`{"X-A":1}`:                 "expected a string",
		`{"X-A":null}`:              "null is not a value",
		`["X-A"]`:                   "an object",
		`{"grpc-timeout":"1S"}`:     "gRPC's own",
		`{"X-Token-Bin":"AAAA"}`:    "binary metadata",
		`{"Bad Name":"1"}`:          "header name",
	} {
		_, err := DecodeRunSpec(strings.NewReader(base+body+`}`), Limits{})
		fe, ok := errors.AsType[*FieldError](err)
		if !ok || !strings.HasPrefix(fe.Field, "headers") || !strings.Contains(fe.Message, want) {
			t.Errorf("%s: %v, want a headers field error saying %q", body, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "Evil") {
			t.Errorf("%s: the error quotes the value: %v", body, err)
		}
	}
}
