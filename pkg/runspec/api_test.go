package runspec

import (
	"errors"
	"testing"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/genai"
)

// The spec's api reaches the run; a name that is no API, or one the
// target's transport does not carry, is a FieldError on api.
func TestBuildAPI(t *testing.T) {
	for _, c := range []struct {
		target, api string
		want        genai.API
		bad         bool
	}{
		{"grpc://h:1", "kserve-stream", genai.APIKServeStream, false},
		{"http://h:1/openai", "openai-completions", genai.APIOpenAICompletions, false},
		{"http://h:1", "", "", false},
		{"http://h:1", "chat", "", true},
		{"https://h:1", "kserve-stream", "", true},
		{"grpcs://h:1", "generate", "", true},
	} {
		r, err := Build(api.RunSpec{Target: c.target, Model: "m", API: c.api}, Env{AnyData: true})
		var fe *api.FieldError
		switch {
		case c.bad && (!errors.As(err, &fe) || fe.Field != "api"):
			t.Errorf("%s %q: %v, want a FieldError on api", c.target, c.api, err)
		case !c.bad && err != nil:
			t.Errorf("%s %q: %v", c.target, c.api, err)
		case !c.bad && r.Spec.API != c.want:
			t.Errorf("%s %q: API %q, want %q", c.target, c.api, r.Spec.API, c.want)
		}
	}
}
