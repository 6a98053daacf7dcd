package runspec

import (
	"errors"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/api"
)

// FuzzDecodeRunSpec: no input panics; every refusal is a FieldError; every
// accepted spec builds settings and a run without error (Decode promises
// to catch all that before a run).
func FuzzDecodeRunSpec(f *testing.F) {
	f.Add(spec(nil))
	f.Add(settings(`{"target_qps": "NaN"}`))
	f.Add(spec(map[string]string{"preset": `"gnmt"`, "ruleset": `"v0.5"`, "scenario": `"MultiStream"`, "settings": `{"interval_ms": 100}`}))
	f.Add(`{"target": "grpc://[::1]:1", "model": "m", "scenario": "Offline", "settings": {"target_qps": 1e-300}}`)
	f.Add(`{"target": "http://h:1", "model": "m", "scenario": "Server", "user_conf": "*.Server.target_qps = 5"}`)
	lim := api.Limits{MaxBodyBytes: 4096, AllowSearch: true}
	f.Fuzz(func(t *testing.T, body string) {
		s, err := Decode(strings.NewReader(body), lim)
		if err != nil {
			var fe *api.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v (%T) is not a *FieldError", err, err)
			}
			return
		}
		if _, err := Settings(s); err != nil {
			t.Fatalf("accepted spec fails Settings: %v\n%s", err, body)
		}
		if _, err := Admit(s, lim, ""); err != nil {
			t.Fatalf("accepted spec is not admitted: %v\n%s", err, body)
		}
	})
}
