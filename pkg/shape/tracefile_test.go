package shape

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/trace"
)

// writeTrace writes content to a file of the test's and returns its path.
func writeTrace(t testing.TB, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// walk is one pass of s, whole.
func walk(t testing.TB, s trace.Shape) []trace.Arrival {
	t.Helper()
	a, err := s.Arrivals()
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var out []trace.Arrival
	for x, ok := a.Next(); ok; x, ok = a.Next() {
		out = append(out, x)
	}
	if err := a.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func req(in, out int, ids ...int) *trace.Request {
	return &trace.Request{InputTokens: in, OutputTokens: out, HashIDs: ids}
}

const mooncake = `{"timestamp": 0, "input_length": 1024, "output_length": 10, "hash_ids": [0, 1]}
{"timestamp": 27, "input_length": 700, "output_length": 5, "hash_ids": [0, 2]}
{"timestamp": 27, "input_length": 3, "output_length": 1}
{"timestamp": 1500.5, "input_length": 9, "output_length": 2, "hash_ids": null, "extra": "ignored"}
`

// A Mooncake-format trace: every request at its timestamp (ms from the
// trace's start), with its lengths and hash ids; every pass the same.
func TestOpenTraceJSONL(t *testing.T) {
	s, err := OpenTrace(writeTrace(t, "m.jsonl", mooncake), TraceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []trace.Arrival{
		{At: 0, Request: req(1024, 10, 0, 1)},
		{At: 27 * time.Millisecond, Request: req(700, 5, 0, 2)},
		{At: 27 * time.Millisecond, Request: req(3, 1)},
		{At: 1500500 * time.Microsecond, Request: req(9, 2)},
	}
	for pass := range 2 {
		if got := walk(t, s); !reflect.DeepEqual(got, want) {
			t.Fatalf("pass %d: %s, want %s", pass, show(got), show(want))
		}
	}
	if s.End() != 0 {
		t.Errorf("End %v without a window, want 0 (the last arrival's)", s.End())
	}
	if m := s.(interface{ Models() []string }).Models(); m != nil {
		t.Errorf("Models() %q without a mix, want nil", m)
	}
}

func show(as []trace.Arrival) string {
	var b strings.Builder
	for _, a := range as {
		fmt.Fprintf(&b, "{%v m%d %+v} ", a.At, a.Model, *a.Request)
	}
	return b.String()
}

// An Azure LLM inference trace: offsets from the first row's date, in
// the files' own format (seven fractional digits; the 2024 files' zone)
// and in RFC 3339; CRLF, a byte order mark and blank lines are read.
func TestOpenTraceAzureCSV(t *testing.T) {
	for name, content := range map[string]string{
		"2023": "\xef\xbb\xbfTIMESTAMP,ContextTokens,GeneratedTokens\r\n2023-11-16 18:15:46.6805900,374,44\r\n\r\n2023-11-16 18:15:50.9951690,396,109\r\n2023-11-16 18:16:46.6805900,1,1\r\n",
		"2024": "TIMESTAMP,ContextTokens,GeneratedTokens\n2024-05-10 00:00:00.009930+00:00,374,44\n2024-05-10 00:00:04.324909+00:00,396,109\n2024-05-10 00:01:00.009930+00:00,1,1",
		"rfc":  "\"GeneratedTokens\",\"TIMESTAMP\",\"ContextTokens\"\n44,2023-11-16T18:15:46.68059Z,374\n109,2023-11-16T19:15:50.995169+01:00,396\n1,2023-11-16T18:16:46.68059Z,1\n",
	} {
		t.Run(name, func(t *testing.T) {
			s, err := OpenTrace(writeTrace(t, "azure.csv", content), TraceOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got := walk(t, s)
			gap := 4314979 * time.Microsecond
			if name != "2024" {
				gap = 4314579 * time.Microsecond
			}
			want := []trace.Arrival{{At: 0, Request: req(374, 44)}, {At: gap, Request: req(396, 109)}, {At: time.Minute, Request: req(1, 1)}}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s, want %s", show(got), show(want))
			}
		})
	}
}

// A window of trace time, replayed at a speed: offsets from the window's
// start over the speed, the window's end as End.
func TestOpenTraceWindowAndSpeed(t *testing.T) {
	var b strings.Builder
	for i := range 10 {
		fmt.Fprintf(&b, `{"timestamp": %d, "input_length": %d, "output_length": 1}`+"\n", i*100, i+1)
	}
	path := writeTrace(t, "w.jsonl", b.String())
	s, err := OpenTrace(path, TraceOptions{Start: 250 * time.Millisecond, Duration: 400 * time.Millisecond, Speed: 2})
	if err != nil {
		t.Fatal(err)
	}
	got := walk(t, s)
	want := []trace.Arrival{ // 300, 400, 500, 600 ms of trace time
		{At: 25 * time.Millisecond, Request: req(4, 1)}, {At: 75 * time.Millisecond, Request: req(5, 1)},
		{At: 125 * time.Millisecond, Request: req(6, 1)}, {At: 175 * time.Millisecond, Request: req(7, 1)},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s, want %s", show(got), show(want))
	}
	if s.End() != 200*time.Millisecond {
		t.Errorf("End %v, want the window's 400 ms at speed 2", s.End())
	}
	// The trace through trace.New: its count and length.
	req := trace.DefaultSettings()
	req.Scenario, req.Shape = trace.Server, s
	tr, err := trace.New(req, trace.QSL{TotalSampleCount: 8, PerformanceSampleCount: 8})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Len() != 4 || tr.Duration != 200*time.Millisecond {
		t.Errorf("trace.New: %d queries over %v, want 4 over 200ms", tr.Len(), tr.Duration)
	}
	_, err = OpenTrace(path, TraceOptions{Start: 2 * time.Second})
	if !errors.Is(err, ErrShape) || !strings.Contains(err.Error(), "holds none of its 10 requests") {
		t.Errorf("a window past the trace: %v, want its requests' span named", err)
	}
}

// A trace's models: with a mix, each line's model is its entry's index
// and a model not in the mix names the line; without one, a model other
// than the run's is refused.
func TestOpenTraceModels(t *testing.T) {
	content := `{"timestamp": 0, "input_length": 1, "output_length": 1, "model": "b"}
{"timestamp": 1, "input_length": 1, "output_length": 1, "model": "a"}
{"timestamp": 2, "input_length": 1, "output_length": 1}
`
	path := writeTrace(t, "models.jsonl", content)
	mix := &Mix{Entries: []MixEntry{{Model: "a", Weight: 1}, {Model: "b", Weight: 1}}}
	s, err := OpenTrace(path, TraceOptions{Mix: mix})
	if err != nil {
		t.Fatal(err)
	}
	got := walk(t, s)
	if got[0].Model != 1 || got[1].Model != 0 {
		t.Errorf("models %d, %d, want 1 (b), 0 (a)", got[0].Model, got[1].Model)
	}
	if m := s.(interface{ Models() []string }).Models(); !reflect.DeepEqual(m, []string{"a", "b"}) {
		t.Errorf("Models() %q, want the mix's [a b]", m)
	}
	_, err = OpenTrace(path, TraceOptions{Mix: &Mix{Entries: []MixEntry{{Model: "a", Weight: 1}}}})
	if !errors.Is(err, ErrShape) || !strings.Contains(err.Error(), `line 1: model "b" is not in --mix (a)`) {
		t.Errorf("a model outside the mix: %v", err)
	}
	// The check reads every line, in the window or not.
	_, err = OpenTrace(path, TraceOptions{Mix: &Mix{Entries: []MixEntry{{Model: "a", Weight: 1}}}, Start: 2 * time.Millisecond})
	if !errors.Is(err, ErrShape) || !strings.Contains(err.Error(), `line 1: model "b" is not in --mix (a)`) {
		t.Errorf("a model outside the mix, before the window: %v", err)
	}
	_, err = OpenTrace(path, TraceOptions{Model: "a"})
	if !errors.Is(err, ErrShape) || !strings.Contains(err.Error(), `line 1: model "b" is not the run's model "a"`) {
		t.Errorf("a model not the run's: %v", err)
	}
	if _, err := OpenTrace(writeTrace(t, "one.jsonl", `{"timestamp": 0, "input_length": 1, "output_length": 1, "model": "a"}`), TraceOptions{Model: "a"}); err != nil {
		t.Errorf("a trace naming the run's model: %v", err)
	}
}

// Hostile trace files: each refused by OpenTrace with an error naming the
// line and what is wrong.
func TestOpenTraceRefuses(t *testing.T) {
	ok := `{"timestamp": 0, "input_length": 1, "output_length": 1}` + "\n"
	for _, c := range []struct{ name, content, want string }{
		{"empty", "", "holds no request"},
		{"blank lines", "\n \r\n\n", "holds no request"},
		{"header only", "TIMESTAMP,ContextTokens,GeneratedTokens\n", "holds no request"},
		{"truncated last line", ok + `{"timestamp": 5, "input_len`, "line 2: not a JSON object"},
		{"not JSON", ok + "hello\n", "line 2: not a JSON object"},
		{"an array", ok + "[1, 2]\n", "line 2: not a JSON object"},
		{"garbage after", ok + `{"timestamp": 1, "input_length": 1, "output_length": 1} x` + "\n", "line 2: not a JSON object"},
		{"unsorted", ok + `{"timestamp": 9, "input_length": 1, "output_length": 1}` + "\n" + ok, "line 3: timestamp 0s is before the line before's (9ms)"},
		{"negative", `{"timestamp": -1, "input_length": 1, "output_length": 1}`, "line 1: timestamp -1 is negative"},
		{"NaN", `{"timestamp": NaN, "input_length": 1, "output_length": 1}`, "line 1: not a JSON object"},
		{"1e400", `{"timestamp": 1e400, "input_length": 1, "output_length": 1}`, "line 1: timestamp 1e400 is not a finite number"},
		{"too late", `{"timestamp": 1e13, "input_length": 1, "output_length": 1}`, "line 1: timestamp 1e+13 ms is past"},
		{"timestamp string", `{"timestamp": "0", "input_length": 1, "output_length": 1}`, `line 1: timestamp is a string ("0")`},
		{"no timestamp", `{"input_length": 1, "output_length": 1}`, "line 1: no timestamp"},
		{"no output", `{"timestamp": 0, "input_length": 1}`, "line 1: no output_length"},
		{"fraction", `{"timestamp": 0, "input_length": 1.5, "output_length": 1}`, "line 1: input_length 1.5 is not a whole number"},
		{"zero length", `{"timestamp": 0, "input_length": 0, "output_length": 1}`, "line 1: input_length 0 is not between 1 and"},
		{"huge length", `{"timestamp": 0, "input_length": 1, "output_length": 1e9}`, "line 1: output_length 1e+09 is not between 1 and"},
		{"bad hash ids", `{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [1, "2"]}`, `line 1: hash_ids[1] "2": want a whole number`},
		{"hash ids not an array", `{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": 7}`, "line 1: hash_ids 7: want an array"},
		{"negative hash id", `{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [-1]}`, "line 1: hash_ids[0] -1: want"},
		{"empty model", `{"timestamp": 0, "input_length": 1, "output_length": 1, "model": ""}`, "line 1: model \"\": want a model's name"},
		{"csv missing column", "TIMESTAMP,ContextTokens\n2023-11-16 18:15:46.68,1\n", "line 1: neither a JSON object (a JSONL trace) nor a CSV header with the columns TIMESTAMP,ContextTokens,GeneratedTokens: no GeneratedTokens"},
		{"csv short row", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.68,1\n", "line 2: 2 columns, the header has 3"},
		{"csv bad date", "TIMESTAMP,ContextTokens,GeneratedTokens\n16/11/2023,1,1\n", `line 2: TIMESTAMP "16/11/2023" is not a date`},
		{"csv bad length", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.68,x,1\n", `line 2: ContextTokens "x" is not a whole number`},
		{"csv unsorted", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.68,1,1\n2023-11-16 18:15:46.60,1,1\n", "line 3: TIMESTAMP is 80ms before the first row's"},
		{"csv unsorted later", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.68,1,1\n2023-11-16 18:15:47,1,1\n2023-11-16 18:15:46.9,1,1\n", "line 4: timestamp 220ms is before the line before's (320ms)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := OpenTrace(writeTrace(t, "bad", c.content), TraceOptions{})
			if !errors.Is(err, ErrShape) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want ErrShape saying %q", err, c.want)
			}
		})
	}
}

// A line of 10 MB is refused at its number, without reading it whole.
func TestOpenTraceLongLine(t *testing.T) {
	ok := `{"timestamp": 0, "input_length": 1, "output_length": 1}` + "\n"
	path := writeTrace(t, "long.jsonl", ok+ok+`{"timestamp": 1, "pad": "`+strings.Repeat("x", 10<<20)+`"}`+"\n")
	_, err := OpenTrace(path, TraceOptions{})
	if !errors.Is(err, ErrShape) || !strings.Contains(err.Error(), "line 3 is longer than 1048576 bytes") {
		t.Fatalf("got %v", err)
	}
}

// A file of more requests than the bound is refused at the line that
// passes it (OpenTrace's bound is MaxTraceRequests; a small one here).
func TestOpenTraceTooManyRequests(t *testing.T) {
	var b strings.Builder
	for i := range 12 {
		fmt.Fprintf(&b, `{"timestamp": %d, "input_length": 1, "output_length": 1}`+"\n", i)
	}
	tf := &traceFile{path: writeTrace(t, "many.jsonl", b.String()), speed: 1}
	fi, err := os.Stat(tf.path)
	if err != nil {
		t.Fatal(err)
	}
	tf.size, tf.modTime = fi.Size(), fi.ModTime() // as OpenTrace saw it: the check's pass compares
	err = tf.check(10)
	if !errors.Is(err, ErrShape) || !strings.Contains(err.Error(), "line 11: more than 10 requests") {
		t.Fatalf("got %v", err)
	}
	if err := tf.check(12); err != nil {
		t.Fatalf("12 requests, bound 12: %v", err)
	}
}

// Bad options name their flag.
func TestOpenTraceOptions(t *testing.T) {
	path := writeTrace(t, "ok.jsonl", `{"timestamp": 0, "input_length": 1, "output_length": 1}`)
	for _, c := range []struct {
		o    TraceOptions
		want string
	}{
		{TraceOptions{Speed: -1}, "--trace-speed -1"},
		{TraceOptions{Speed: nan()}, "--trace-speed NaN"},
		{TraceOptions{Start: -time.Second}, "--trace-start -1s"},
		{TraceOptions{Duration: -time.Second}, "--trace-duration -1s"},
	} {
		if _, err := OpenTrace(path, c.o); !errors.Is(err, ErrShape) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
	}
	if _, err := OpenTrace(filepath.Join(t.TempDir(), "none"), TraceOptions{}); !errors.Is(err, ErrShape) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
	if _, err := OpenTrace(t.TempDir(), TraceOptions{}); !errors.Is(err, ErrShape) || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a directory: %v", err)
	}
}

func nan() float64 {
	z := 0.0
	return z / z
}

// A file replaced or changed after its check: the next pass is refused,
// naming it (the engine's passes must see one schedule).
func TestOpenTraceChangedBetweenPasses(t *testing.T) {
	path := writeTrace(t, "t.jsonl", mooncake)
	s, err := OpenTrace(path, TraceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	walk(t, s)
	replaced := path + ".new"
	if err := os.WriteFile(replaced, []byte(strings.Replace(mooncake, `"timestamp": 27,`, `"timestamp": "27",`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(replaced, path); err != nil {
		t.Fatal(err)
	}
	_, err = s.Arrivals()
	if !errors.Is(err, ErrShape) || !strings.Contains(err.Error(), "changed since it was checked") {
		t.Fatalf("a replaced file: %v", err)
	}
}

// A pass that meets a bad line (the file changed under the pass, its size
// and time kept) ends with an error naming it.
func TestTracePassEndsAtABadLine(t *testing.T) {
	path := writeTrace(t, "t.jsonl", mooncake)
	s, err := OpenTrace(path, TraceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Arrivals()
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	// The same length, a bad third line, written over the open file.
	bad := strings.Replace(mooncake, `"input_length": 3, "output_length"`, `"input_length":"3","output_length"`, 1)
	if len(bad) != len(mooncake) {
		t.Fatal("the test's lines differ in length")
	}
	if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ok := a.Next(); ok; _, ok = a.Next() {
		n++
	}
	if err := a.Err(); n != 2 || !errors.Is(err, ErrShape) || !strings.Contains(err.Error(), "line 3: input_length is a string") {
		t.Fatalf("%d arrivals, then %v; want 2, then line 3 named", n, err)
	}
	if err := a.Close(); err != nil {
		t.Errorf("Close after the end: %v", err)
	}
}

// BenchmarkTracePass: one arrival of a pass over a Mooncake trace, as the
// issuer's cursor takes it (a line read and parsed, its Request made).
func BenchmarkTracePass(b *testing.B) {
	var sb strings.Builder
	for i := range 10_000 {
		fmt.Fprintf(&sb, `{"timestamp": %d, "input_length": %d, "output_length": %d, "hash_ids": [%d, %d, %d, %d]}`+"\n",
			i, 1500+i%500, 1+i%300, i%7, 100+i%61, 4*i, 4*i+1)
	}
	s, err := OpenTrace(writeTrace(b, "b.jsonl", sb.String()), TraceOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var a trace.Arrivals
	for b.Loop() {
		if a == nil {
			if a, err = s.Arrivals(); err != nil {
				b.Fatal(err)
			}
		}
		if _, ok := a.Next(); !ok {
			a.Close()
			a = nil
		}
	}
}

// A file truncated, or rewritten in place, while a pass reads it ends
// that pass with an error naming the change, not at a silent early end
// (the engine would take it for the trace's end) or with another
// schedule: the reader's buffer may hold the old bytes, the file's size
// and time at the pass's end do not.
func TestTracePassNoticesAChangeDuringIt(t *testing.T) {
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, `{"timestamp": %d, "input_length": 1, "output_length": 1}`+"\n", i)
	}
	for name, change := range map[string]func(path string) error{
		"truncated": func(path string) error { return os.Truncate(path, int64(b.Len()/2)) },
		"rewritten in place": func(path string) error {
			// Same size, same schedule, another time: only the time tells.
			return os.Chtimes(path, time.Now(), time.Now().Add(time.Hour))
		},
		"grown": func(path string) error {
			f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.WriteString(`{"timestamp": 999, "input_length": 1, "output_length": 1}` + "\n")
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			path := writeTrace(t, "t.jsonl", b.String())
			for _, o := range []TraceOptions{{}, {Duration: 50 * time.Millisecond}} { // to the end; a window ending before it
				s, err := OpenTrace(path, o)
				if err != nil {
					t.Fatal(err)
				}
				a, err := s.Arrivals()
				if err != nil {
					t.Fatal(err)
				}
				if _, ok := a.Next(); !ok {
					t.Fatalf("no first arrival: %v", a.Err())
				}
				if err := change(path); err != nil {
					t.Fatal(err)
				}
				n := 1
				for _, ok := a.Next(); ok; _, ok = a.Next() {
					n++
				}
				if err := a.Err(); !errors.Is(err, ErrShape) || !strings.Contains(err.Error(), "changed during a pass") {
					t.Errorf("window %v: the pass ended after %d arrivals with %v, want the change named", o.Duration, n, err)
				}
				a.Close()
				// Put it back as it was for the next window.
				if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
