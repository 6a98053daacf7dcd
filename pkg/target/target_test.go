package target

import (
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		raw          string
		scheme, host string
		wantErr      string
	}{
		{raw: "http://127.0.0.1:8000", scheme: "http", host: "127.0.0.1:8000"},
		{raw: "grpc://localhost:8001", scheme: "grpc", host: "localhost:8001"},
		{raw: "http://[::1]:8000/", scheme: "http", host: "[::1]:8000"},
		{raw: "https://h:8443", scheme: "https", host: "h:8443"},
		{raw: "grpcs://h:8443", scheme: "grpcs", host: "h:8443"},
		// A port left out is the scheme's.
		{raw: "http://h", scheme: "http", host: "h:80"},
		{raw: "grpc://h", scheme: "grpc", host: "h:80"},
		{raw: "https://h", scheme: "https", host: "h:443"},
		{raw: "grpcs://h", scheme: "grpcs", host: "h:443"},
		{raw: "https://[::1]/", scheme: "https", host: "[::1]:443"},
		{raw: "https://gw.example.com/serving/team-a", scheme: "https", host: "gw.example.com:443"},
		{raw: "grpcs://h/v2", wantErr: "a grpcs:// target takes no path"},
		{raw: "http://h:", wantErr: "host:port"},
		{raw: "ftp://h:21", wantErr: "the scheme must be http://, https://, grpc:// or grpcs://"},
		{raw: "127.0.0.1:8000", wantErr: "want http://host:port or grpc://host:port"},
		// A missing scheme: what to type instead, and nothing of Go's parser.
		{raw: "127.0.0.1:1", wantErr: `"127.0.0.1:1" has no scheme: use http://127.0.0.1:1 or grpc://127.0.0.1:1`},
		{raw: "localhost:1", wantErr: `"localhost:1" has no scheme: use http://localhost:1 or grpc://localhost:1`},
		{raw: "[::1]:8000/prefix", wantErr: "use http://[::1]:8000/prefix or grpc://[::1]:8000"},
		{raw: "h:8000", wantErr: "use http://h:8000 or grpc://h:8000"},
		{raw: "grpc://:8001", wantErr: "host:port"},
		{raw: "grpc://h:8001/v2", wantErr: "no path"},
		{raw: "http://h:80%", wantErr: "not a URL"},
		{raw: "", wantErr: "scheme"},
		{raw: "http://h:8000/prefix", scheme: "http", host: "h:8000"},
		{raw: "http://user:s3cret@h:8000", wantErr: "credentials"},
		{raw: "grpc://s3cret@h:8001", wantErr: "credentials"},
		{raw: "http://user:s3cret@h:80%", wantErr: "not a URL"},
		{raw: "http://user:s3/cret@h:8000", wantErr: "target"},
		{raw: "http://h:0", wantErr: "port 0 is not between 1 and 65535"},
		{raw: "grpc://h:99999", wantErr: "port 99999 is not between 1 and 65535"},
		{raw: "http://h:8000/v2?x=1", wantErr: "no query"},
		{raw: "http://h:8000?", wantErr: "no query"},
		{raw: "grpc://h:8001#frag", wantErr: "no fragment"},
		{raw: "http://h:8000/#", wantErr: "no fragment"},
		{raw: "http://h:8000/\xff", wantErr: "not valid UTF-8"},
	}
	for _, c := range cases {
		t.Run(c.raw, func(t *testing.T) {
			got, err := Parse(c.raw)
			if c.wantErr != "" {
				if !errors.Is(err, ErrTarget) || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err %v: want ErrTarget mentioning %q", err, c.wantErr)
				}
				if strings.Contains(err.Error(), "first path segment") {
					t.Errorf("err %q: Go's parser, not what to type", err)
				}
				// Credentials are never echoed back, nor logged from here.
				if strings.Contains(err.Error(), "s3cret") {
					t.Errorf("err %q echoes the password", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Scheme != c.scheme || got.Host != c.host || got.URL != c.raw {
				t.Errorf("got %+v", got)
			}
		})
	}
}

func TestRedact(t *testing.T) {
	for raw, want := range map[string]string{
		"http://h:8000/v2":            "http://h:8000/v2",
		"http://u:s3cret@h:8000":      "http://REDACTED@h:8000",
		"grpc://s3cret@h:8001":        "grpc://REDACTED@h:8001",
		"http://u:s3/c?r#et@h:8000/p": "http://REDACTED@h:8000/p",
		"http:u:s3cret@h":             "REDACTED@h",
		"not a url at all":            "not a url at all",
	} {
		if got := Redact(raw); got != want {
			t.Errorf("Redact(%q) = %q, want %q", raw, got, want)
		}
	}
}
