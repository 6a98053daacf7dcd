package shape_test

import (
	"testing"

	"github.com/netloadgen/netloadgen/pkg/shape"
	"github.com/netloadgen/netloadgen/pkg/target"
)

// TestMixURLFollowsTargetGrammar: a mix entry's URL becomes a session's
// target, so --mix takes exactly the URLs --target takes (pkg/target's
// grammar, which pkg/shape, a layer below, re-states). URLs with a ',' or
// ';' are left out: --mix's own syntax splits on them.
func TestMixURLFollowsTargetGrammar(t *testing.T) {
	urls := []string{
		"http://h:8000", "https://h", "grpc://h:8001", "grpcs://h", "http://127.0.0.1:9", "http://[::1]:9",
		"https://h/openai", "http://h:1/v2/", "grpc://h:1/", "grpc://h:1/v2", "grpcs://h/x",
		"http://h:1/?x=1", "http://h:1?", "http://h:1/p?q", "http://h:1#", "http://h:1#f", "grpc://h:1?x",
		"http://h:", "http://h:0", "http://h:65535", "http://h:65536", "grpc://h:99999", "http://h:x",
		"http://:8000", "http://", "ftp://h:1", "h:8000", "//h:1", "http:h", "HTTP://h:1",
		"http://h:1/%zz", "http://h%zz:1",
	}
	for _, u := range urls {
		_, terr := target.Parse(u)
		_, merr := shape.ParseMix("a=1@" + u)
		if (terr == nil) != (merr == nil) {
			t.Errorf("%q: --target says %v, --mix says %v: want both to take it or both to refuse it", u, terr, merr)
		}
	}
}
