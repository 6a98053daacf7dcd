package api

import (
	"errors"
	"strings"
	"testing"
)

// TestTLSFields: the tls block is refused, naming its field, for a
// plain-text target, for a client certificate or key given other than as
// an @file: reference (never quoting it), and for one without the other.
func TestTLSFields(t *testing.T) {
	cases := []struct {
		target string
		tls    TLS
		field  string
	}{
		{"https://h", TLS{ServerName: "gw.example.com", CAPEM: "x", InsecureSkipVerify: true}, ""},
		{"grpcs://h:8443", TLS{ClientCert: "@file:c.crt", ClientKey: "@file:c.key"}, ""},
		{"http://h:1", TLS{ServerName: "x"}, "tls"},
		{"grpc://h:1", TLS{InsecureSkipVerify: true}, "tls"},
		{"https://h", TLS{ClientCert: "-----BEGIN s3cret", ClientKey: "@file:c.key"}, "tls.client_cert"},
		{"https://h", TLS{ClientCert: "@file:c.crt", ClientKey: "@env:KEY"}, "tls.client_key"},
		{"https://h", TLS{ClientCert: "@file:", ClientKey: "@file:c.key"}, "tls.client_cert"},
		{"https://h", TLS{ClientCert: "@file:c.crt"}, "tls.client_key"},
		{"https://h", TLS{ClientKey: "@file:c.key"}, "tls.client_cert"},
		{"https://h", TLS{ServerName: "a b"}, "tls.server_name"},
	}
	for _, c := range cases {
		s := RunSpec{Target: c.target, Model: "m", Scenario: "Server", TLS: &c.tls}
		err := s.CheckFields()
		fe, ok := errors.AsType[*FieldError](err)
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%s %+v: %v", c.target, c.tls, err)
		case c.field != "" && (!ok || fe.Field != c.field):
			t.Errorf("%s %+v: got %v, want a FieldError on %s", c.target, c.tls, err, c.field)
		case err != nil && strings.Contains(err.Error(), "s3cret"):
			t.Errorf("%v quotes the value", err)
		}
	}
	// Both named when one is missing.
	s := RunSpec{Target: "https://h", Model: "m", Scenario: "Server", TLS: &TLS{ClientCert: "@file:c"}}
	if err := s.CheckFields(); err == nil || !strings.Contains(err.Error(), "tls.client_cert and tls.client_key") {
		t.Errorf("err %v: want both fields named", err)
	}
}
