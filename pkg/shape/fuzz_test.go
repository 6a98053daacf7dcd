package shape

import (
	"errors"
	"regexp"
	"strings"
	"testing"
)

// FuzzParseStages: any --stages is refused with ErrShape naming the flag
// or parses into stages that Staged takes and that print back as
// themselves; nothing panics.
func FuzzParseStages(f *testing.F) {
	for _, s := range []string{"30s:100,60s:100->500,30s:500,10s:2000", "1m:0.5", "1s:0,1s:1->0", "30s", "-1s:5", "1s:1e400", "1s:1->->2", ",,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		st, err := ParseStages(v)
		if err != nil {
			if !errors.Is(err, ErrShape) || !strings.Contains(err.Error(), "--stages") {
				t.Fatalf("ParseStages(%q): %v; want ErrShape naming --stages", v, err)
			}
			return
		}
		back, err := ParseStages(FormatStages(st))
		if err != nil || FormatStages(back) != FormatStages(st) {
			t.Fatalf("%q parses as %q, which parses as %q, %v", v, FormatStages(st), FormatStages(back), err)
		}
		if _, err := Staged(StagedOptions{Stages: st}); err != nil {
			t.Fatalf("Staged refuses what ParseStages took (%q): %v", v, err)
		}
	})
}

// userinfoPW is a URL's user information with the password "pw".
var userinfoPW = regexp.MustCompile(`://[^/?#]*:pw@`)

// FuzzParseMix: any --mix is refused with ErrShape naming the flag, or
// parses into weights summing to 1 that print back as the same mix; no
// error holds a URL with user information.
func FuzzParseMix(f *testing.F) {
	for _, s := range []string{"identity=0.7,resnet50=0.3", "a=1@http://h:1;openai-chat", "a=1@http://u:pw@h", "x=1,a://b:pw@h=1", "a=1,a=1", "=", "a=1@;", "a=1@grpc://h:1;x;y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		m, err := ParseMix(v)
		if err != nil {
			if !errors.Is(err, ErrShape) || !strings.Contains(err.Error(), "--mix") {
				t.Fatalf("ParseMix(%q): %v; want ErrShape naming --mix", v, err)
			}
			if userinfoPW.MatchString(err.Error()) {
				t.Fatalf("ParseMix(%q): the error repeats the URL's credentials: %v", v, err)
			}
			return
		}
		total := 0.0
		for _, e := range m.Entries {
			total += e.Weight
		}
		if total < 1-1e-9 || total > 1+1e-9 {
			t.Fatalf("ParseMix(%q): weights sum to %v", v, total)
		}
		back, err := ParseMix(m.String())
		if err != nil || len(back.Entries) != len(m.Entries) {
			t.Fatalf("%q prints as %q, which parses as %v, %v", v, m.String(), back, err)
		}
		if p := m.Pick(1, 2); p < 0 || p >= len(m.Entries) {
			t.Fatalf("Pick out of range: %d of %d", p, len(m.Entries))
		}
	})
}
