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
		{raw: "https://h:443", wantErr: "scheme"},
		{raw: "127.0.0.1:8000", wantErr: "want http://host:port or grpc://host:port"},
		{raw: "http://h", wantErr: "host:port"},
		{raw: "grpc://:8001", wantErr: "host:port"},
		{raw: "grpc://h:8001/v2", wantErr: "no path"},
		{raw: "http://h:80%", wantErr: "not a URL"},
		{raw: "", wantErr: "scheme"},
	}
	for _, c := range cases {
		t.Run(c.raw, func(t *testing.T) {
			got, err := Parse(c.raw)
			if c.wantErr != "" {
				if !errors.Is(err, ErrTarget) || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err %v: want ErrTarget mentioning %q", err, c.wantErr)
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
