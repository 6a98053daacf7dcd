package api

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestDecodeProbeRequest(t *testing.T) {
	cases := []struct {
		body, field string
	}{
		{`{"target": "http://h:1", "model": "m", "model_version": "1"}`, ""},
		{`{"target": "grpc://h:1"}`, ""},
		{`{"model": "m"}`, "target"},
		{`{"target": "http://h"}`, ""}, // port 80
		{`{"target": "ftp://h:1"}`, "target"},
		{`{"target": "http://h:1", "scenario": "Server"}`, "scenario"},
	}
	for _, c := range cases {
		_, err := DecodeProbeRequest(strings.NewReader(c.body), Limits{})
		var fe *FieldError
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%s: %v", c.body, err)
		case c.field != "" && (!errors.As(err, &fe) || fe.Field != c.field):
			t.Errorf("%s: got %v, want a FieldError on %s", c.body, err, c.field)
		}
	}
}

// TestNamesAreUTF8: a name that is not UTF-8 goes into URLs, log lines and
// JSON files; it is refused naming its field, whether the CLI filled the
// spec (CheckFields) or a body carried it, as raw bytes or as an escaped
// lone surrogate (encoding/json would make either U+FFFD silently).
func TestNamesAreUTF8(t *testing.T) {
	good := RunSpec{Target: "http://h:1", Model: "m", Scenario: "Server"}
	for _, field := range []string{"model", "model_version", "sut_name"} {
		s := good
		switch field {
		case "model":
			s.Model = "res\xffnet"
		case "model_version":
			s.ModelVersion = "\xc3"
		case "sut_name":
			s.SUTName = "rig\xfe"
		}
		var fe *FieldError
		if err := s.CheckFields(); !errors.As(err, &fe) || fe.Field != field || !strings.Contains(fe.Message, "not valid UTF-8") {
			t.Errorf("CheckFields with a bad %s: %v", field, err)
		}
		for _, raw := range []string{"a\xffb", `a\ud800b`, `\udc00`} {
			body := `{"target": "http://h:1", "model": "m", "scenario": "Server", "` + field + `": "` + raw + `"}`
			if field == "model" {
				body = `{"target": "http://h:1", "scenario": "Server", "model": "` + raw + `"}`
			}
			_, err := DecodeRunSpec(strings.NewReader(body), Limits{})
			if !errors.As(err, &fe) || fe.Field != field || !strings.Contains(fe.Message, "not valid UTF-8") {
				t.Errorf("%s = %q: got %v, want a FieldError on %s", field, raw, err, field)
			}
		}
	}
	// Valid text, escaped or not, and U+FFFD itself written by the user.
	for _, raw := range []string{"résnet", `r\u00e9snet`, `\ud83d\ude00`, "\uFFFD", `\ufffd`, `a\\ud800`} {
		body := `{"target": "http://h:1", "model": "` + raw + `", "scenario": "Server"}`
		if _, err := DecodeRunSpec(strings.NewReader(body), Limits{}); err != nil {
			t.Errorf("model %q: %v", raw, err)
		}
	}
	body := `{"target": "http://h:1", "model": "m", "model_version": "\ud800"}`
	if _, err := DecodeProbeRequest(strings.NewReader(body), Limits{}); err == nil {
		t.Errorf("probe with a bad model_version accepted")
	}
}

// The spec's slo is bounded in length here; its syntax is pkg/runspec's
// (genai.ParseSLO).
func TestSLOLength(t *testing.T) {
	s := RunSpec{Target: "http://h:1", Model: "m", SLO: "ttft=500ms"}
	if err := s.CheckFields(); err != nil {
		t.Fatalf("a short slo: %v", err)
	}
	s.SLO = strings.Repeat("ttft=1s,", 40)
	var fe *FieldError
	if err := s.CheckFields(); !errors.As(err, &fe) || fe.Field != "slo" {
		t.Errorf("a 320-byte slo: got %v, want a FieldError on slo", err)
	}
}

// A goodput search needs an SLO, a percentage, and a find-peak.
func TestSearchGoodputPercent(t *testing.T) {
	for _, c := range []struct {
		name  string
		s     RunSpec
		field string // "" accepted
	}{
		{"ok", RunSpec{SLO: "ttft=1s", Search: &Search{Mode: SearchFindPeak, GoodputPercent: 90}}, ""},
		{"no slo", RunSpec{Search: &Search{Mode: SearchFindPeak, GoodputPercent: 90}}, "search.goodput_percent"},
		{"over 100", RunSpec{SLO: "ttft=1s", Search: &Search{Mode: SearchFindPeak, GoodputPercent: 190}}, "search.goodput_percent"},
		{"negative", RunSpec{SLO: "ttft=1s", Search: &Search{Mode: SearchFindPeak, GoodputPercent: -5}}, "search.goodput_percent"},
		{"sweep", RunSpec{SLO: "ttft=1s", Search: &Search{Mode: SearchSweep, Rates: []float64{10}, GoodputPercent: 90}}, "search.goodput_percent"},
	} {
		c.s.Target, c.s.Model = "http://h:1", "m"
		err := c.s.CheckFields()
		var fe *FieldError
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.field != "" && (!errors.As(err, &fe) || fe.Field != c.field):
			t.Errorf("%s: got %v, want a FieldError on %s", c.name, err, c.field)
		}
	}
}

// A duration given as text to a field that counts a unit (request_timeout_ms,
// issue_slack_ns, a setting's _ms) is refused naming the field and the
// whole number it wants, with an example; the CLI's flags say the
// converse for a bare number.
func TestDurationFieldGivenAsText(t *testing.T) {
	for _, c := range []struct{ body, field, want string }{
		{`{"target":"http://h:1","model":"m","request_timeout_ms":"2s"}`, "request_timeout_ms",
			`expected a non-negative integer, got the string "2s": a whole number of milliseconds is expected, e.g. 2000 for 2s`},
		{`{"target":"http://h:1","model":"m","issue_slack_ns":"50us"}`, "issue_slack_ns",
			`a whole number of nanoseconds is expected, e.g. 2000000 for 2ms`},
		{`{"target":"http://h:1","model":"m","settings":{"min_duration_ms":"10s"}}`, "settings.min_duration_ms",
			`a whole number of milliseconds is expected, e.g. 2000 for 2s`},
		{`{"target":"http://h:1","model":"m","settings":{"target_latency_ms":"10ms"}}`, "settings.target_latency_ms",
			`expected a number, got the string "10ms": a number of milliseconds is expected, e.g. 2000 for 2s`},
	} {
		_, err := DecodeRunSpec(strings.NewReader(c.body), Limits{})
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v: want a FieldError on %s containing %q", c.body, err, c.field, c.want)
		}
	}
}

// A find-peak's strategy is scout or full; a scout length goes with the
// scout strategy, within the daemon's duration limit; a sweep has neither.
// Each refusal names its field.
func TestSearchStrategy(t *testing.T) {
	lim := Limits{AllowSearch: true, MaxDuration: time.Minute}
	for _, c := range []struct {
		name, search, field string // field "": accepted
	}{
		{"default", `{"mode": "find-peak"}`, ""},
		{"scout with its length", `{"mode": "find-peak", "strategy": "scout", "scout_duration_ms": 2000}`, ""},
		{"the default strategy with a length", `{"mode": "find-peak", "scout_duration_ms": 2000}`, ""},
		{"full", `{"mode": "find-peak", "strategy": "full"}`, ""},
		{"scout length at the limit", `{"mode": "find-peak", "scout_duration_ms": 60000}`, ""},
		{"no such strategy", `{"mode": "find-peak", "strategy": "fast"}`, "search.strategy"},
		{"a strategy's case", `{"mode": "find-peak", "strategy": "Full"}`, "search.strategy"},
		{"scout length with full", `{"mode": "find-peak", "strategy": "full", "scout_duration_ms": 2000}`, "search.scout_duration_ms"},
		{"scout length over the limit", `{"mode": "find-peak", "scout_duration_ms": 60001}`, "search.scout_duration_ms"},
		{"a sweep's strategy", `{"mode": "sweep", "rates": [10], "strategy": "scout"}`, "search.strategy"},
		{"a sweep's full strategy", `{"mode": "sweep", "rates": [10], "strategy": "full"}`, "search.strategy"},
		{"a sweep's scout length", `{"mode": "sweep", "rates": [10], "scout_duration_ms": 2000}`, "search.scout_duration_ms"},
		{"a scout length as text", `{"mode": "find-peak", "scout_duration_ms": "2s"}`, "search.scout_duration_ms"},
		{"a negative scout length", `{"mode": "find-peak", "scout_duration_ms": -1}`, "search.scout_duration_ms"},
	} {
		body := `{"target": "http://h:1", "model": "m", "scenario": "Server", "search": ` + c.search + `}`
		s, err := DecodeRunSpec(strings.NewReader(body), lim)
		var fe *FieldError
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.field == "" && s.Search == nil:
			t.Errorf("%s: no search decoded", c.name)
		case c.field != "" && (!errors.As(err, &fe) || fe.Field != c.field):
			t.Errorf("%s: got %v, want a FieldError on %s", c.name, err, c.field)
		}
	}
}
