package secret

import (
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"slices"
	"strings"
)

// MinScrubBytes is the shortest form of a secret a Scrubber replaces.
// Shorter ones are left: a value of one to three bytes ("1", "yes") is no
// credential, and replacing every occurrence of it would garble the very
// text (a status, a number) that says what went wrong.
const MinScrubBytes = 4

// maxMatchPaths bounds the ways one match may be under way at once
// (a '%' or '\' of the value may be itself or start an escape); past it,
// the rarest paths are dropped. Real values have few such bytes.
const maxMatchPaths = 16

// Scrubber takes a run's secret values out of text that came from the
// server: servers and proxies repeat a request's Authorization or API key
// in their error bodies, and that text is kept (result.json's failure
// examples, LoadGen's logs, the daemon's answers, a probe's error). Every
// form of a value found is replaced by Redacted, the one way a secret is
// shown: the value; the credential of a "Scheme credential" value (Bearer,
// Basic, ...) alone; for Basic, the decoded user:password and the password;
// the value and the credential in standard and URL-safe base64, padded or
// not. Each byte of a form is also found escaped as JSON encoders write it
// (\/, \", \\, \u00XX in either case) or URL-encoded (%XX, + for a
// space), so a server quoting the header inside JSON or a URL is caught
// however much of it it escaped. Forms shorter than MinScrubBytes are not
// replaced.
//
// A nil *Scrubber (no secrets) returns every text as it is, at no cost.
// Scrubbing is for failures' text only: a few kinds and messages a run.
type Scrubber struct {
	forms []string
	// starts marks the bytes a form may begin with, escapes included: most
	// positions of a text are passed over on one lookup.
	starts [256]bool
}

// NewScrubber is the scrubber of values (resolved header values); nil when
// none is long enough to scrub.
func NewScrubber(values ...string) *Scrubber {
	var forms []string
	add := func(f string) {
		if len(f) >= MinScrubBytes && !slices.Contains(forms, f) {
			forms = append(forms, f)
		}
	}
	for _, v := range values {
		if len(v) < MinScrubBytes {
			continue
		}
		plain := []string{v}
		if scheme, cred, ok := strings.Cut(v, " "); ok && isScheme(scheme) {
			cred = strings.TrimLeft(cred, " ")
			plain = append(plain, cred)
			if strings.EqualFold(scheme, "Basic") {
				plain = append(plain, basicForms(cred)...)
			}
		}
		for _, p := range plain {
			add(p)
		}
		for _, p := range plain[:min(len(plain), 2)] {
			for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
				add(enc.EncodeToString([]byte(p)))
			}
		}
	}
	if len(forms) == 0 {
		return nil
	}
	s := &Scrubber{forms: forms}
	s.starts['\\'], s.starts['%'] = true, true
	for _, f := range forms {
		s.starts[f[0]] = true
		if f[0] == ' ' {
			s.starts['+'] = true
		}
	}
	return s
}

// isScheme reports whether s is an HTTP authentication scheme's name (a
// token of letters, digits and - . _ ~ + !).
func isScheme(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~+!", c) >= 0) {
			return false
		}
	}
	return true
}

// basicForms are a Basic credential's decoded user:password and password.
func basicForms(cred string) []string {
	b, err := base64.StdEncoding.DecodeString(cred)
	if err != nil {
		if b, err = base64.RawStdEncoding.DecodeString(cred); err != nil {
			return nil
		}
	}
	out := []string{string(b)}
	if _, pass, ok := strings.Cut(string(b), ":"); ok {
		out = append(out, pass)
	}
	return out
}

// String is text with every form of the secrets replaced by Redacted.
func (s *Scrubber) String(text string) string {
	if s == nil {
		return text
	}
	var b strings.Builder
	done := 0 // text[:done] is in b (or, while b is empty, needs no change)
	for i := 0; i < len(text); {
		if !s.starts[text[i]] {
			i++
			continue
		}
		end := -1
		for _, f := range s.forms {
			end = max(end, matchAt(f, text, i))
		}
		if end < 0 {
			i++
			continue
		}
		b.WriteString(text[done:i])
		b.WriteString(Redacted)
		done, i = end, end
	}
	if done == 0 && b.Len() == 0 {
		return text
	}
	b.WriteString(text[done:])
	return b.String()
}

// matchAt is the end of the longest match of form f in text at i, each of
// its bytes as itself or escaped (escapedAt); -1 for none.
func matchAt(f, text string, i int) int {
	var a, b [maxMatchPaths]int
	cur, next := a[:1], b[:0]
	cur[0] = i
	for k := 0; k < len(f); k++ {
		next = next[:0]
		for _, p := range cur {
			if p >= len(text) {
				continue
			}
			if text[p] == f[k] {
				next = addPath(next, p+1)
			}
			if n := escapedAt(f[k], text, p); n > 0 {
				next = addPath(next, p+n)
			}
		}
		if len(next) == 0 {
			return -1
		}
		cur, next = next, cur
	}
	return slices.Max(cur)
}

func addPath(paths []int, p int) []int {
	if len(paths) == maxMatchPaths || slices.Contains(paths, p) {
		return paths
	}
	return append(paths, p)
}

// escapedAt is the length of c escaped at text[p:] (JSON's \/ \" \\ and
// \u00XX, a URL's %XX, a form's + for a space); 0 when it is not there.
func escapedAt(c byte, text string, p int) int {
	rest := text[p:]
	switch {
	case len(rest) >= 6 && rest[0] == '\\' && rest[1] == 'u' && c < 0x80 && hexByte(rest[2:4]) == 0 && hexByte(rest[4:6]) == int(c):
		return 6
	case len(rest) >= 3 && rest[0] == '%' && hexByte(rest[1:3]) == int(c):
		return 3
	case len(rest) >= 2 && rest[0] == '\\' && rest[1] == c && (c == '/' || c == '"' || c == '\\'):
		return 2
	case c == ' ' && rest[0] == '+': // a form-encoded query's space
		return 1
	}
	return 0
}

// hexByte is the value of two hex digits, either case; -1 if they are not.
func hexByte(h string) int {
	v := 0
	for i := 0; i < 2; i++ {
		c := h[i]
		switch {
		case '0' <= c && c <= '9':
			v = v<<4 | int(c-'0')
		case 'a' <= c && c <= 'f':
			v = v<<4 | int(c-'a'+10)
		case 'A' <= c && c <= 'F':
			v = v<<4 | int(c-'A'+10)
		default:
			return -1
		}
	}
	return v
}

// Error is err with its text scrubbed; errors.Is and errors.As still see
// its chain (a probe's target.ErrTarget, a failure's *kserve.Error). A
// cause's own fields are not scrubbed: show the error, not a field dug out
// of it. nil and an error with nothing to scrub are returned as they are.
func (s *Scrubber) Error(err error) error {
	if s == nil || err == nil {
		return err
	}
	msg := err.Error()
	if out := s.String(msg); out != msg {
		return &scrubbedError{err: err, msg: out}
	}
	return err
}

type scrubbedError struct {
	err error
	msg string
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }

// Logger is log with every line's message and attributes scrubbed (an
// error's text, strings, anything shown through fmt): the log lines of a
// run may quote what the server said.
func (s *Scrubber) Logger(log *slog.Logger) *slog.Logger {
	if s == nil || log == nil {
		return log
	}
	return slog.New(&scrubHandler{h: log.Handler(), s: s})
}

type scrubHandler struct {
	h slog.Handler
	s *Scrubber
}

func (h *scrubHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.h.Enabled(ctx, l) }

func (h *scrubHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, h.s.String(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.s.attr(a))
		return true
	})
	return h.h.Handle(ctx, out)
}

func (h *scrubHandler) WithAttrs(as []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(as))
	for i, a := range as {
		out[i] = h.s.attr(a)
	}
	return &scrubHandler{h: h.h.WithAttrs(out), s: h.s}
}

func (h *scrubHandler) WithGroup(name string) slog.Handler {
	return &scrubHandler{h: h.h.WithGroup(name), s: h.s}
}

// attr is a scrubbed: a string scrubbed; a group member by member; any
// other value shown as text when that text holds a secret (an error, a
// struct), else as it was, so the handler still formats it its own way.
func (s *Scrubber) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, s.String(v.String()))
	case slog.KindGroup:
		g := v.Group()
		out := make([]slog.Attr, len(g))
		for i, m := range g {
			out[i] = s.attr(m)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(out...)}
	case slog.KindAny:
		var text string
		if err, ok := v.Any().(error); ok {
			text = err.Error()
		} else {
			text = fmt.Sprint(v.Any())
		}
		if out := s.String(text); out != text {
			return slog.String(a.Key, out)
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
