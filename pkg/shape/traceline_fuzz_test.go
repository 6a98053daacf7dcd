package shape

import (
	"reflect"
	"testing"
)

// FuzzParseJSONLine: any line either parses to a request within the
// bounds (a time not negative, lengths from 1 to MaxTraceTokens, ids not
// negative) or is refused with an error; never a panic.
func FuzzParseJSONLine(f *testing.F) {
	for _, s := range []string{
		`{"timestamp": 0, "input_length": 1024, "output_length": 10, "hash_ids": [0, 1]}`,
		`{"timestamp": 1.5, "input_length": 3, "output_length": 1, "model": "llm"}`,
		`{"timestamp": "0"}`, `{"timestamp": 1e400}`, `[1]`, `{`, ``, `null`,
		`{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [9007199254740993]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		rec, err := parseJSONLine(line)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an empty error")
			}
			return
		}
		if rec.at < 0 || rec.in < 1 || rec.in > MaxTraceTokens || rec.out < 1 || rec.out > MaxTraceTokens {
			t.Fatalf("%q parsed to %+v", line, rec)
		}
		for _, id := range rec.hashIDs {
			if id < 0 {
				t.Fatalf("%q: hash id %d", line, id)
			}
		}
	})
}

// FuzzFastJSONLine: the fast path reads a line only as parseJSONLine
// does: whatever it accepts, parseJSONLine accepts with the same request.
func FuzzFastJSONLine(f *testing.F) {
	for _, s := range []string{
		`{"timestamp": 0, "input_length": 1024, "output_length": 10, "hash_ids": [0, 1]}`,
		` {"timestamp":27,"input_length":3,"output_length":1,"model":"llm","hash_ids":[]} `,
		`{"timestamp": 1, "timestamp": 2, "input_length": 1, "output_length": 1, "model": "a", "model": ""}`,
		`{"Timestamp": 0, "input_length": 1, "output_length": 1}`, `{"timestamp": 01, "input_length": 1, "output_length": 1}`,
		`{"timestamp": 999999999999999, "input_length": 1, "output_length": 1}`, `{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		fast, ok := fastJSONLine(line)
		if !ok {
			return
		}
		slow, err := parseJSONLine(line)
		if err != nil {
			t.Fatalf("%q: the fast path read %+v, parseJSONLine refused it: %v", line, fast, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q: the fast path read %+v, parseJSONLine %+v", line, fast, slow)
		}
	})
}

// FuzzParseCSVRow: any row under the Azure header either parses to
// lengths within the bounds or is refused; never a panic.
func FuzzParseCSVRow(f *testing.F) {
	for _, s := range []string{
		"2023-11-16 18:15:46.6805900,374,44", "2024-05-10 00:00:00.009930+00:00,1,1",
		"2023-11-16T18:15:46Z,1,1", ",,", "x,1", `"2023-11-16 18:15:46",1,"2"`,
	} {
		f.Add([]byte(s))
	}
	cols, err := csvHeader([]byte("TIMESTAMP,ContextTokens,GeneratedTokens"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		rec, _, err := cols.parse(line)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an empty error")
			}
			return
		}
		if rec.in < 1 || rec.in > MaxTraceTokens || rec.out < 1 || rec.out > MaxTraceTokens {
			t.Fatalf("%q parsed to %+v", line, rec)
		}
	})
}

// The fast path takes Mooncake's plain lines and leaves the rest to
// parseJSONLine.
func TestFastJSONLine(t *testing.T) {
	for _, c := range []struct {
		line string
		fast bool
	}{
		{`{"timestamp": 27, "input_length": 6472, "output_length": 26, "hash_ids": [46, 47, 11]}`, true},
		{` { "hash_ids" : [ ] , "model":"llm", "output_length":1,"input_length":1,"timestamp":0 }` + "\r", true},
		{`{"timestamp": 1.5, "input_length": 1, "output_length": 1}`, false},
		{`{"timestamp": 1, "input_length": 1, "output_length": 1, "hash_ids": null}`, false},
		{`{"timestamp": 1, "input_length": 1, "output_length": 1, "extra": 0}`, false},
		{`{"timestamp": 1, "input_length": 0, "output_length": 1}`, false},
		{`{"timestamp": 1, "input_length": 1, "output_length": 1, "model": "caf\u00e9"}`, false},
		{`{"timestamp": 1, "input_length": 1, "output_length": 1}}`, false},
	} {
		fast, ok := fastJSONLine([]byte(c.line))
		if ok != c.fast {
			t.Errorf("%s: fast %v, want %v", c.line, ok, c.fast)
			continue
		}
		if slow, err := parseJSONLine([]byte(c.line)); ok && (err != nil || !reflect.DeepEqual(fast, slow)) {
			t.Errorf("%s: fast %+v, slow %+v, %v", c.line, fast, slow, err)
		}
	}
}
