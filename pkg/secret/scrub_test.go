package secret

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"
	"testing"
)

func TestScrubberForms(t *testing.T) {
	const bearer, key = "Bearer tok/3+9<x>Z&q=7", "key+1/2<3>_Q-w9"
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:pa55/w+rd"))
	s := NewScrubber(bearer, key, basic, "abc", "")
	goJSON := func(v string) string { b, _ := json.Marshal(v); return strings.Trim(string(b), `"`) }
	for _, c := range []struct{ name, in, want string }{
		{"whole value", "got " + bearer + "!", "got " + Redacted + "!"},
		{"credential alone", `token "tok/3+9<x>Z&q=7" invalid`, `token "` + Redacted + `" invalid`},
		{"scheme lower-cased", "bearer tok/3+9<x>Z&q=7", "bearer " + Redacted},
		{"key", "x-api-key=key+1/2<3>_Q-w9;", "x-api-key=" + Redacted + ";"},
		{"base64 std", "b=" + base64.StdEncoding.EncodeToString([]byte(bearer)), "b=" + Redacted},
		{"base64 raw url of credential", "c=" + base64.RawURLEncoding.EncodeToString([]byte("tok/3+9<x>Z&q=7")) + ".", "c=" + Redacted + "."},
		{"base64 url padded of key", base64.URLEncoding.EncodeToString([]byte(key)), Redacted},
		{"Go JSON", `{"auth":"` + goJSON(bearer) + `"}`, `{"auth":"` + Redacted + `"}`},
		{"slash escaped", `{"k":"key+1\/2<3>_Q-w9"}`, `{"k":"` + Redacted + `"}`},
		{"\\u00XX upper and lower, mixed", `tok\u002F3\u002b9\u003Cx\u003eZ\u0026q\u003d7`, Redacted},
		{"percent-encoded", "q=key%2B1%2f2%3C3%3E_Q-w9&", "q=" + Redacted + "&"},
		{"form-encoded", "auth=Bearer+tok%2F3%2B9%3Cx%3EZ%26q%3D7&", "auth=" + Redacted + "&"},
		{"basic decoded", "user alice:pa55/w+rd refused", "user " + Redacted + " refused"},
		{"basic password", "password pa55/w+rd", "password " + Redacted},
		{"basic header", "Authorization: " + basic, "Authorization: " + Redacted},
		{"twice", key + key, Redacted + Redacted},
		{"short values left", "abc is fine", "abc is fine"},
		{"user name left", "alice", "alice"},
		{"nothing", "HTTP 500: boom", "HTTP 500: boom"},
		{"prefix only", "tok/3+9<x", "tok/3+9<x"},
		{"stray escapes", `\u00 %2 \ %`, `\u00 %2 \ %`},
	} {
		if got := s.String(c.in); got != c.want {
			t.Errorf("%s: String(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
	}
}

func TestScrubberBackslashAndPercent(t *testing.T) {
	// A value's own \ and % may be written as themselves or escaped: both
	// readings are followed.
	s := NewScrubber(`a\b%25c`)
	for _, in := range []string{`a\b%25c`, `a\\b%25c`, `a\\b%2525c`, `a\u005cb\u002525c`} {
		if got := s.String("[" + in + "]"); got != "["+Redacted+"]" {
			t.Errorf("String(%q) = %q", in, got)
		}
	}
}

func TestScrubberNil(t *testing.T) {
	var s *Scrubber
	if NewScrubber() != nil || NewScrubber("abc", "") != nil {
		t.Error("a scrubber with nothing to scrub is not nil")
	}
	err := errors.New("x")
	if s.String("tok") != "tok" || s.Error(err) != err || s.Error(nil) != nil {
		t.Error("a nil scrubber changed something")
	}
	log := slog.Default()
	if s.Logger(log) != log {
		t.Error("a nil scrubber wrapped the logger")
	}
}

func TestScrubberError(t *testing.T) {
	s := NewScrubber("Bearer sekrit-1")
	base := &fs.PathError{Op: "GET", Path: "/v2", Err: fs.ErrPermission}
	err := fmt.Errorf("refused (%s): %w", "Bearer sekrit-1", base)
	got := s.Error(err)
	if strings.Contains(got.Error(), "sekrit") || !strings.Contains(got.Error(), "refused ("+Redacted+")") {
		t.Errorf("Error() = %q", got)
	}
	var pe *fs.PathError
	if !errors.Is(got, fs.ErrPermission) || !errors.As(got, &pe) {
		t.Error("the scrubbed error lost its chain")
	}
	if plain := errors.New("HTTP 500"); s.Error(plain) != plain {
		t.Error("an error with nothing to scrub was wrapped")
	}
}

func TestScrubberLogger(t *testing.T) {
	s := NewScrubber("Bearer sekrit-1")
	var buf bytes.Buffer
	log := s.Logger(slog.New(slog.NewJSONHandler(&buf, nil))).With("echo", "sekrit-1")
	log.Info("server said Bearer sekrit-1", "error", errors.New("401: sekrit-1"), "n", 3,
		slog.Group("g", "s", "x sekrit-1"), "any", struct{ A string }{"sekrit-1"}, "list", []string{"a", "b"})
	out := buf.String()
	if strings.Contains(out, "sekrit") || strings.Count(out, Redacted) != 5 {
		t.Errorf("log line %s", out)
	}
	if !strings.Contains(out, `"n":3`) || !strings.Contains(out, `"list":["a","b"]`) {
		t.Errorf("values without secrets changed: %s", out)
	}
}

// FuzzScrubber: whatever the secret and whatever surrounds it, its forms
// are found.
func FuzzScrubber(f *testing.F) {
	f.Add("Bearer tok/3+9<x>", "pre ", " post")
	f.Add("key%2F\\u", `\u00`, `%`)
	f.Fuzz(func(t *testing.T, secret, pre, post string) {
		if len(secret) < MinScrubBytes {
			return
		}
		s := NewScrubber(secret)
		for _, form := range []string{secret, base64.StdEncoding.EncodeToString([]byte(secret)), base64.RawURLEncoding.EncodeToString([]byte(secret))} {
			out := s.String(pre + form + post)
			if !strings.Contains(out, Redacted) {
				t.Fatalf("%q in %q: %q", form, pre+form+post, out)
			}
		}
	})
}

// BenchmarkScrubber: what scrubbing a failure's text costs (once per
// failure kind and per kept message, never per answered sample): a
// 512-byte server error without a secret and one quoting two.
func BenchmarkScrubber(b *testing.B) {
	const bearer, key = "Bearer tok/3+9<x>Z&q=7", "key+1/2<3>_Q-w9"
	s := NewScrubber(bearer, key)
	clean := strings.Repeat(`{"error":"model m: input IN: shape [1,4] \/ want [4]: 100% of 8"} `, 8)[:512]
	dirty := (`credentials rejected: ` + bearer + " | " + key + " " + base64.StdEncoding.EncodeToString([]byte(bearer)) + " " + clean)[:512]
	for _, c := range []struct{ name, text string }{{"clean", clean}, {"echoed", dirty}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = s.String(c.text)
			}
		})
	}
}
