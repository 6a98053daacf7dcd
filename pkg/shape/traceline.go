package shape

// The line parsers of trace files: one JSONL object (Mooncake's layout),
// one CSV header and row (the Azure LLM inference traces'). Each error
// names the field or column and says what it wants; the pass adds the
// file and the line.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// traceRecord is one request of a trace: its trace time (JSONL: from the
// trace's start; CSV: from the first row), its lengths, its prompt blocks
// and its model ("": none named).
type traceRecord struct {
	at      time.Duration
	in, out int
	hashIDs []int
	model   string
}

// jsonLine is a JSONL line as read: numbers kept raw, so that a string, a
// fraction or an overflow is named rather than coerced.
type jsonLine struct {
	Timestamp    json.RawMessage `json:"timestamp"`
	InputLength  json.RawMessage `json:"input_length"`
	OutputLength json.RawMessage `json:"output_length"`
	HashIDs      json.RawMessage `json:"hash_ids"`
	Model        json.RawMessage `json:"model"`
}

// parseJSONLine reads one JSONL request: {"timestamp": ms from the
// trace's start, "input_length": N, "output_length": N, "hash_ids": [...],
// "model": "..."}, the last two optional; other fields are ignored.
func parseJSONLine(line []byte) (traceRecord, error) {
	var l jsonLine
	if err := json.Unmarshal(line, &l); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) || !bytes.HasPrefix(bytes.TrimSpace(line), []byte("{")) {
			return traceRecord{}, fmt.Errorf("not a JSON object (a JSONL trace has one a line, e.g. {\"timestamp\": 0, \"input_length\": 512, \"output_length\": 64}): %v", err)
		}
		return traceRecord{}, fmt.Errorf("not a trace request: %v", err)
	}
	var rec traceRecord
	ms, err := jsonNumber("timestamp", l.Timestamp, false)
	if err != nil {
		return rec, err
	}
	if ms > maxTraceMs {
		return rec, fmt.Errorf("timestamp %v ms is past %v ms (31 years): want ms from the trace's start", ms, float64(maxTraceMs))
	}
	if ms == math.Trunc(ms) {
		rec.at = time.Duration(ms) * time.Millisecond // exact: a whole ms ≤ 10^12
	} else {
		rec.at = time.Duration(math.Round(ms * float64(time.Millisecond)))
	}
	if rec.in, err = jsonLength("input_length", l.InputLength); err != nil {
		return rec, err
	}
	if rec.out, err = jsonLength("output_length", l.OutputLength); err != nil {
		return rec, err
	}
	if rec.hashIDs, err = jsonHashIDs(l.HashIDs); err != nil {
		return rec, err
	}
	if len(l.Model) > 0 && string(l.Model) != "null" {
		if err := json.Unmarshal(l.Model, &rec.model); err != nil || rec.model == "" {
			return rec, fmt.Errorf("model %s: want a model's name, a non-empty string", clip(l.Model))
		}
	}
	return rec, nil
}

// jsonNumber reads a JSON number field that must be there and not
// negative; integer says it must be whole.
func jsonNumber(name string, raw json.RawMessage, integer bool) (float64, error) {
	s := string(raw)
	switch {
	case len(raw) == 0 || s == "null":
		return 0, fmt.Errorf("no %s: every line needs timestamp, input_length and output_length", name)
	case raw[0] == '"':
		return 0, fmt.Errorf("%s is a string (%s): want a number", name, clip(raw))
	}
	v, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil || math.IsInf(v, 0) || math.IsNaN(v):
		return 0, fmt.Errorf("%s %s is not a finite number", name, clip(raw))
	case v < 0:
		return 0, fmt.Errorf("%s %s is negative: want 0 or more", name, clip(raw))
	case integer && v != math.Trunc(v):
		return 0, fmt.Errorf("%s %s is not a whole number", name, clip(raw))
	}
	return v, nil
}

// jsonLength reads a token count: a whole number from 1 to MaxTraceTokens.
func jsonLength(name string, raw json.RawMessage) (int, error) {
	v, err := jsonNumber(name, raw, true)
	if err != nil {
		return 0, err
	}
	return checkLength(name, v)
}

func checkLength(name string, v float64) (int, error) {
	if v < 1 || v > MaxTraceTokens {
		return 0, fmt.Errorf("%s %v is not between 1 and %d tokens", name, v, MaxTraceTokens)
	}
	return int(v), nil
}

// jsonHashIDs reads hash_ids: absent, null or an array of whole numbers
// from 0 to 2^53 (Mooncake's ids are small integers).
func jsonHashIDs(raw json.RawMessage) ([]int, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var ids []json.RawMessage
	if err := json.Unmarshal(raw, &ids); err != nil {
		return nil, fmt.Errorf("hash_ids %s: want an array of whole numbers, e.g. [0, 1, 2]", clip(raw))
	}
	if len(ids) > MaxTraceTokens/TraceBlockTokens {
		return nil, fmt.Errorf("hash_ids has %d ids: a prompt of at most %d tokens has at most %d blocks of %d", len(ids), MaxTraceTokens, MaxTraceTokens/TraceBlockTokens, TraceBlockTokens)
	}
	out := make([]int, len(ids))
	for i, n := range ids {
		v, err := strconv.ParseInt(string(n), 10, 64) // a string, a fraction, null: not an int
		if err != nil || v < 0 || v > 1<<53 {
			return nil, fmt.Errorf("hash_ids[%d] %s: want a whole number from 0 to 2^53", i, clip(n))
		}
		out[i] = int(v)
	}
	return out, nil
}

// clip is raw for a message, at most 40 bytes of it.
func clip(raw []byte) string {
	if len(raw) > 40 {
		return string(raw[:40]) + "…"
	}
	return string(raw)
}

// The CSV columns a trace needs (the Azure LLM inference traces' header:
// TIMESTAMP,ContextTokens,GeneratedTokens), matched without regard to case.
const (
	colTimestamp = "TIMESTAMP"
	colContext   = "ContextTokens"
	colGenerated = "GeneratedTokens"
)

// csvColumns are the indices of the columns a CSV trace's rows are read by.
type csvColumns struct {
	at, in, out, n int // n: the header's width
}

// csvHeader reads a CSV trace's header.
func csvHeader(line []byte) (csvColumns, error) {
	c := csvColumns{at: -1, in: -1, out: -1}
	fields := splitCSV(line)
	c.n = len(fields)
	for i, f := range fields {
		switch {
		case strings.EqualFold(f, colTimestamp):
			c.at = i
		case strings.EqualFold(f, colContext):
			c.in = i
		case strings.EqualFold(f, colGenerated):
			c.out = i
		}
	}
	var missing []string
	for _, m := range []struct {
		i    int
		name string
	}{{c.at, colTimestamp}, {c.in, colContext}, {c.out, colGenerated}} {
		if m.i < 0 {
			missing = append(missing, m.name)
		}
	}
	if len(missing) > 0 {
		return c, fmt.Errorf("neither a JSON object (a JSONL trace) nor a CSV header with the columns %s,%s,%s: no %s",
			colTimestamp, colContext, colGenerated, strings.Join(missing, ", "))
	}
	return c, nil
}

// parse reads a CSV row: its date, its lengths.
func (c csvColumns) parse(line []byte) (traceRecord, time.Time, error) {
	fields := splitCSV(line)
	if len(fields) != c.n {
		return traceRecord{}, time.Time{}, fmt.Errorf("%d columns, the header has %d", len(fields), c.n)
	}
	at, err := parseTraceTime(fields[c.at])
	if err != nil {
		return traceRecord{}, time.Time{}, err
	}
	var rec traceRecord
	if rec.in, err = csvLength(colContext, fields[c.in]); err != nil {
		return rec, at, err
	}
	if rec.out, err = csvLength(colGenerated, fields[c.out]); err != nil {
		return rec, at, err
	}
	return rec, at, nil
}

func csvLength(name, v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("%s %q is not a whole number", name, clip([]byte(v)))
	}
	return checkLength(name, float64(n))
}

// splitCSV splits a row at its commas, each field trimmed of spaces and of
// one pair of double quotes (the traces quote nothing that holds a comma).
func splitCSV(line []byte) []string {
	fields := strings.Split(string(line), ",")
	for i, f := range fields {
		f = strings.TrimSpace(f)
		if len(f) >= 2 && f[0] == '"' && f[len(f)-1] == '"' {
			f = f[1 : len(f)-1]
		}
		fields[i] = f
	}
	return fields
}

// traceTimeLayouts are the dates a CSV trace's TIMESTAMP may hold: the
// Azure traces' ("2023-11-16 18:15:46.6805900", with "+00:00" in the 2024
// ones) and RFC 3339. A date without a zone is UTC.
var traceTimeLayouts = []string{
	"2006-01-02 15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
}

func parseTraceTime(v string) (time.Time, error) {
	for _, l := range traceTimeLayouts {
		if t, err := time.Parse(l, v); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%s %q is not a date: want e.g. 2023-11-16 18:15:46.6805900 or RFC 3339", colTimestamp, clip([]byte(v)))
}
