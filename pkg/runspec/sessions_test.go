package runspec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/api"
)

// A spec's sessions become the run's schedule and conversations; bad
// values are field errors on sessions or think_time.
func TestBuildSessions(t *testing.T) {
	root := t.TempDir()
	chats := filepath.Join(root, "chats.jsonl")
	if err := os.WriteFile(chats, []byte(`{"conversations":[{"from":"human","value":"a"},{"from":"human","value":"b"}]}`+"\n"+"not json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(root, "good.jsonl")
	if err := os.WriteFile(good, []byte(`{"conversations":[{"from":"human","value":"a"},{"from":"human","value":"b"}]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := api.RunSpec{Target: "http://h:1", Model: "m", Scenario: "Server", Overrides: api.RunSettings{MinDurationMs: ptr(uint64(2000))}}
	s := base
	s.Sessions, s.ThinkTime = "5:3", "uniform:1s:2s"
	r, err := Build(s, Env{AnyData: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Spec.Settings.Sessions == nil || r.Spec.Settings.Shape == nil || r.Spec.Conversations != nil {
		t.Fatalf("built %+v", r.Spec.Settings)
	}
	s.Sessions = "5:@good.jsonl"
	if r, err = Build(s, Env{DataRoot: root}); err != nil || r.Spec.Conversations == nil || r.Spec.Conversations.Len() != 1 {
		t.Fatalf("a data set: %v", err)
	}
	for _, c := range []struct {
		sessions, think, field, want string
		env                          Env
		workers                      int
	}{
		{"5", "", "sessions", "RATE:TURNS", Env{AnyData: true}, 0},
		{"", "2s", "think_time", "set sessions", Env{AnyData: true}, 0},
		{"5:3", "soon", "think_time", "DURATION", Env{AnyData: true}, 0},
		{"5:@" + chats, "", "sessions", "chats.jsonl:2", Env{AnyData: true}, 0},
		{"5:@/etc/passwd", "", "sessions", "outside LOADGEND_DATA_ROOT", Env{DataRoot: root}, 0},
		{"5:@chats.jsonl", "", "sessions", "not set", Env{}, 0},
		{"5:3", "", "sessions", "workers", Env{AnyData: true}, 2},
		{"0.0001:3", "", "sessions", "no session starts", Env{AnyData: true}, 0},
	} {
		s := base
		s.Sessions, s.ThinkTime, s.Workers = c.sessions, c.think, c.workers
		_, err := Build(s, c.env)
		var fe *api.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || !strings.Contains(fe.Message, c.want) {
			t.Errorf("%q %q: %v, want a field error on %s saying %q", c.sessions, c.think, err, c.field, c.want)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// The daemon takes the fields as the CLI does; a bad one is a field error.
func TestDecodeSessions(t *testing.T) {
	const spec = `{"target": "http://h:1", "model": "m", "sessions": %q, "think_time": "1s", "settings": {"min_duration_ms": 1000}}`
	if _, err := Decode(strings.NewReader(strings.Replace(spec, "%q", `"2:3"`, 1)), api.Limits{}); err != nil {
		t.Fatal(err)
	}
	_, err := Decode(strings.NewReader(strings.Replace(spec, "%q", `"2:@chats.jsonl"`, 1)), api.Limits{})
	var fe *api.FieldError
	if !errors.As(err, &fe) || fe.Field != "sessions" || !strings.Contains(fe.Message, "LOADGEND_DATA_ROOT") {
		t.Fatalf("a data set without a data root: %v", err)
	}
}
