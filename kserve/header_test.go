package kserve

import (
	"strings"
	"testing"
)

func TestCheckHeader(t *testing.T) {
	for _, ok := range []string{"Authorization", "X-Api-Key", "Host", "x-custom.tag_1~"} {
		if err := CheckHeaderName(ok); err != nil {
			t.Errorf("CheckHeaderName(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", ":path", ":authority", "Content-Length", "te", "TE", "User-Agent", "Inference-Header-Content-Length",
		"grpc-timeout", "x-data-bin", "Bad Name", "a:b", "é", "Accept-Encoding", "accept-encoding"} {
		if err := CheckHeaderName(bad); err == nil {
			t.Errorf("CheckHeaderName(%q) accepted", bad)
		}
	}
	if err := CheckHeaderValue("Bearer abc.def-_~+/="); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{"a\nb", "a\r\nX-Evil: 1", "tab\t", "é"} {
		err := CheckHeaderValue(bad)
		if err == nil || strings.Contains(err.Error(), bad) {
			t.Errorf("CheckHeaderValue(%q) = %v", bad, err)
		}
	}
}
