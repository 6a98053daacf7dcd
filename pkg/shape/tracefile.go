package shape

// This file is --trace FILE: a trace of requests replayed open loop, each
// at its timestamp. The file is checked whole once (OpenTrace) and then
// streamed again for every pass the engine walks (trace.New's count, each
// issuer's cursor, the warm-up): nothing but the line being read is held,
// so a trace of millions of requests replays in the memory of a plain run.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/netloadgen/netloadgen/pkg/trace"
)

// The bounds of a trace file. A longer line or a larger file is refused
// at the line that passes the bound: a trace is a list of requests, and a
// line of a megabyte or ten million of them is a wrong file, not a trace
// (and a run that long passes trace.MaxSamples, the engine's own limit).
const (
	// MaxTraceLine is the longest line, its end of line included.
	MaxTraceLine = 1 << 20
	// MaxTraceRequests is the most requests a trace file may hold, all of
	// them counted whatever the window.
	MaxTraceRequests = 5_000_000
	// MaxTraceTokens bounds a request's input_length and output_length
	// (genai.MaxPromptTokens: the longest prompt a run synthesises).
	MaxTraceTokens = 1 << 20
	// TraceBlockTokens is the length of the prompt block a hash id names
	// (Mooncake's traces: 512 tokens a block).
	TraceBlockTokens = 512
	// maxTraceMs bounds a JSONL timestamp (ms): 10^12 ms is 31 years, past
	// any trace, and well inside time.Duration and a float64's integers.
	maxTraceMs = 1e12
)

// TraceOptions configure OpenTrace.
type TraceOptions struct {
	// Speed scales time (--trace-speed; 2: twice as fast; 0 means 1).
	Speed float64
	// Start and Duration take a window of the trace (--trace-start,
	// --trace-duration; 0: from the beginning, to the end), in the
	// trace's own time, before Speed.
	Start, Duration time.Duration
	// Mix names the models a trace's "model" field may name (Arrival.Model
	// is the entry's index); nil: a trace naming models is refused unless
	// it names the run's one model.
	Mix *Mix
	// Model is the run's model, when there is no mix.
	Model string
	// MixSeed draws the model of a line that names none, when there is a
	// mix (Mix.Pick with the request's index in the file, from 0).
	MixSeed uint64
}

// The formats of a trace file.
type traceFormat int

const (
	formatJSONL traceFormat = iota + 1 // a JSON object a line (Mooncake)
	formatCSV                          // a header, then rows (Azure LLM inference traces)
)

// traceFile is an opened trace: where it is, what it was when checked,
// and the options; every pass reads it again.
type traceFile struct {
	path    string
	o       TraceOptions
	speed   float64
	format  traceFormat
	size    int64
	modTime time.Time
	end     time.Duration
}

// OpenTrace checks a trace file (JSONL in Mooncake's layout, or CSV with a
// header in the Azure LLM inference traces' layout) and returns its shape:
// every request at its timestamp, Arrival.Request its lengths and hash
// ids. Errors wrap ErrShape and name the line.
//
// The check reads the whole file once, holding one line at a time: every
// line must parse, timestamps must not go back, and the window must hold
// at least one request. The shape's End is the window's end over the
// speed (Duration given), else 0 (the last arrival's offset). The shape
// also has Models() []string, the mix's models in entry order (nil
// without a mix), which the run's results name models[] by.
func OpenTrace(path string, o TraceOptions) (trace.Shape, error) {
	t := &traceFile{path: path, o: o, speed: o.Speed}
	if t.speed == 0 {
		t.speed = 1
	}
	switch {
	case math.IsNaN(t.speed) || math.IsInf(t.speed, 0) || t.speed < 0:
		return nil, fmt.Errorf("%w: --trace-speed %v: want a factor above 0 (2 replays twice as fast, 0.5 half as fast)", ErrShape, o.Speed)
	case o.Start < 0:
		return nil, fmt.Errorf("%w: --trace-start %v is before the trace's start: want 0 or more", ErrShape, o.Start)
	case o.Duration < 0:
		return nil, fmt.Errorf("%w: --trace-duration %v: want a length above 0 (0: to the trace's end)", ErrShape, o.Duration)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%w: --trace: %w", ErrShape, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: --trace %s is not a regular file", ErrShape, path)
	}
	t.size, t.modTime = fi.Size(), fi.ModTime()
	if err := t.check(MaxTraceRequests); err != nil {
		return nil, err
	}
	if o.Duration > 0 {
		t.end = t.offset(o.Start + o.Duration)
	}
	return t, nil
}

// check is the first pass: the whole file read, every line checked (a
// file of more than limit requests refused), the format found, and at
// least one request in the window.
func (t *traceFile) check(limit int) error {
	p, err := t.open(false)
	if err != nil {
		return err
	}
	defer p.Close()
	p.checking, p.limit = true, limit
	n := 0
	for _, ok := p.Next(); ok; _, ok = p.Next() {
		n++
	}
	if err := p.Err(); err != nil {
		return err
	}
	t.format = p.format
	switch {
	case p.requests == 0:
		return fmt.Errorf("%w: --trace %s holds no request (an empty file, or only a header)", ErrShape, t.path)
	case n == 0:
		return fmt.Errorf("%w: --trace %s: the window (--trace-start %v, --trace-duration %v) holds none of its %d requests, which span %v to %v of trace time",
			ErrShape, t.path, t.o.Start, t.o.Duration, p.requests, p.first, p.prev)
	}
	return nil
}

// End is the window's end, scaled (0 without --trace-duration: the last
// arrival's offset).
func (t *traceFile) End() time.Duration { return t.end }

// Models are the mix's models in entry order, nil without a mix: the
// names of Arrival.Model's indices (result.json's models[]).
func (t *traceFile) Models() []string {
	if t.o.Mix == nil {
		return nil
	}
	names := make([]string, len(t.o.Mix.Entries))
	for i, e := range t.o.Mix.Entries {
		names[i] = e.Model
	}
	return names
}

// Arrivals starts a pass: the file opened again and read from its start.
// A file that is no longer the one checked (its size or time changed) is
// refused: the engine's passes must see the same schedule.
func (t *traceFile) Arrivals() (trace.Arrivals, error) { return t.open(true) }

// offset is trace time at (from the trace's start) as an offset from the
// run's start: from the window's start, over the speed.
func (t *traceFile) offset(at time.Duration) time.Duration {
	return time.Duration(math.Round(float64(at-t.o.Start) / t.speed))
}

// open starts a pass; again says it is not the check (the file must be as
// it was then).
func (t *traceFile) open(again bool) (*tracePass, error) {
	f, err := os.Open(t.path)
	if err != nil {
		return nil, fmt.Errorf("%w: --trace: %w", ErrShape, err)
	}
	if again {
		fi, err := f.Stat()
		if err == nil && (fi.Size() != t.size || !fi.ModTime().Equal(t.modTime)) {
			err = fmt.Errorf("%w: --trace %s changed since it was checked (now %d bytes, modified %v): a trace must stay as it is during its run",
				ErrShape, t.path, fi.Size(), fi.ModTime().UTC().Format(time.RFC3339Nano))
		}
		if err != nil {
			f.Close()
			return nil, err
		}
	}
	return &tracePass{t: t, f: f, r: bufio.NewReaderSize(f, MaxTraceLine), limit: MaxTraceRequests}, nil
}

// tracePass is one pass over a trace file: its reader, where it is, and
// what the next line is checked against.
type tracePass struct {
	t      *traceFile
	f      *os.File
	r      *bufio.Reader
	line   int         // the last line read, from 1
	read   int64       // the bytes read, ends of line included
	format traceFormat // found at the first line that is not empty
	csv    csvColumns
	// requests counts the data lines; first and prev are the trace times
	// of the first and the last one (CSV: base is the first's date).
	requests    int
	first, prev time.Duration
	base        time.Time
	// checking is OpenTrace's pass, which reads past the window to check
	// every line; limit is the most requests the file may hold.
	checking bool
	limit    int
	err      error
	done     bool
}

// Next is the next request in the window.
func (p *tracePass) Next() (trace.Arrival, bool) {
	for !p.done {
		rec, ok := p.record()
		if !ok {
			break
		}
		in := rec.at >= p.t.o.Start && (p.t.o.Duration == 0 || rec.at < p.t.o.Start+p.t.o.Duration)
		if !in && !p.checking {
			if rec.at >= p.t.o.Start {
				p.finish(p.unchanged(false)) // past the window; sorted: nothing after is in it
				break
			}
			continue
		}
		a, err := p.arrival(rec) // the check's: every line's model, in the window or not
		if err != nil {
			p.finish(err)
			break
		}
		if in {
			return a, true
		}
	}
	return trace.Arrival{}, false
}

// arrival is rec as the engine issues it: its offset, its model's index,
// its request.
func (p *tracePass) arrival(rec traceRecord) (trace.Arrival, error) {
	a := trace.Arrival{At: p.t.offset(rec.at),
		Request: &trace.Request{InputTokens: rec.in, OutputTokens: rec.out, HashIDs: rec.hashIDs}}
	m, o := &a.Model, p.t.o
	switch {
	case o.Mix != nil && rec.model != "":
		i, ok := o.Mix.Index(rec.model)
		if !ok {
			return a, p.lineErr("model %q is not in --mix (%s): add it, or leave the line's model out", rec.model, strings.Join(p.t.Models(), ", "))
		}
		*m = i
	case o.Mix != nil:
		*m = o.Mix.Pick(o.MixSeed, p.requests-1)
	case rec.model != "" && o.Model != "" && rec.model != o.Model:
		return a, p.lineErr("model %q is not the run's model %q: give --mix to replay several models", rec.model, o.Model)
	}
	return a, nil
}

// record reads the next data line: false at the end or on an error.
func (p *tracePass) record() (traceRecord, bool) {
	for {
		line, err := p.readLine()
		if err != nil {
			p.finish(err)
			return traceRecord{}, false
		}
		if line == nil {
			p.finish(p.unchanged(true))
			return traceRecord{}, false
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if p.format == 0 {
			if p.format, err = p.sniff(line); err != nil || p.format == formatCSV {
				if err != nil {
					p.finish(err)
					return traceRecord{}, false
				}
				continue // the header
			}
		}
		rec, err := p.parse(line)
		if err == nil {
			err = p.order(rec)
		}
		if err != nil {
			p.finish(err)
			return traceRecord{}, false
		}
		return rec, true
	}
}

// readLine is the next line without its end of line (and, first, a UTF-8
// byte order mark); nil at the end of the file. The slice is the reader's
// until the next read.
func (p *tracePass) readLine() ([]byte, error) {
	line, err := p.r.ReadSlice('\n')
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		return nil, fmt.Errorf("%w: --trace %s line %d is longer than %d bytes: a trace has a request a line", ErrShape, p.t.path, p.line+1, MaxTraceLine)
	case errors.Is(err, io.EOF) && len(line) == 0:
		return nil, nil
	case err != nil && !errors.Is(err, io.EOF):
		return nil, fmt.Errorf("%w: --trace %s line %d: %w", ErrShape, p.t.path, p.line+1, err)
	}
	p.line++
	p.read += int64(len(line))
	line = bytes.TrimSuffix(line, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	if p.line == 1 {
		line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
	}
	return line, nil
}

// sniff finds the format at the first line that is not empty: a JSON
// object is JSONL, anything else must be a CSV header.
func (p *tracePass) sniff(line []byte) (traceFormat, error) {
	if bytes.HasPrefix(bytes.TrimSpace(line), []byte("{")) {
		return formatJSONL, nil
	}
	cols, err := csvHeader(line)
	if err != nil {
		return 0, fmt.Errorf("%w: --trace %s line %d: %w", ErrShape, p.t.path, p.line, err)
	}
	p.csv = cols
	return formatCSV, nil
}

// parse reads a data line in the pass's format; its time is trace time.
func (p *tracePass) parse(line []byte) (traceRecord, error) {
	if p.requests++; p.requests > p.limit {
		return traceRecord{}, p.lineErr("more than %d requests: cut the trace (a run's own limit is %d queries)", p.limit, trace.MaxSamples)
	}
	var rec traceRecord
	var err error
	if p.format == formatJSONL {
		var ok bool
		if rec, ok = fastJSONLine(line); !ok {
			rec, err = parseJSONLine(line)
		}
	} else {
		var at time.Time
		rec, at, err = p.csv.parse(line)
		if err == nil {
			if p.requests == 1 {
				p.base = at
			}
			rec.at = at.Sub(p.base)
		}
	}
	if err != nil {
		return rec, p.lineErr("%w", err)
	}
	return rec, nil
}

// order checks rec's time against the line before.
func (p *tracePass) order(rec traceRecord) error {
	switch {
	case rec.at < 0:
		return p.lineErr("TIMESTAMP is %v before the first row's: the rows must be in time order", -rec.at)
	case p.requests > 1 && rec.at < p.prev:
		return p.lineErr("timestamp %v is before the line before's (%v): the requests must be in time order (sort the file by its timestamp)", rec.at, p.prev)
	}
	if p.requests == 1 {
		p.first = rec.at
	}
	p.prev = rec.at
	return nil
}

// unchanged is nil if the file is still as it was checked at the end of a
// pass (atEOF: all of it read): a file truncated, grown or rewritten in
// place while a pass read it would end that pass early, or feed it
// another schedule, unnoticed by the check at its open. The check's own
// pass compares with what OpenTrace saw before it.
func (p *tracePass) unchanged(atEOF bool) error {
	t := p.t
	fi, err := p.f.Stat()
	switch {
	case err != nil:
		return fmt.Errorf("%w: --trace %s: %w", ErrShape, t.path, err)
	case fi.Size() != t.size || !fi.ModTime().Equal(t.modTime):
		return fmt.Errorf("%w: --trace %s changed during a pass, after line %d (now %d bytes, modified %v; it was %d bytes): a trace must stay as it is during its run",
			ErrShape, t.path, p.line, fi.Size(), fi.ModTime().UTC().Format(time.RFC3339Nano), t.size)
	case atEOF && p.read != t.size:
		return fmt.Errorf("%w: --trace %s: a pass read %d of its %d bytes (a short read after line %d): a trace must stay as it is during its run",
			ErrShape, t.path, p.read, t.size, p.line)
	}
	return nil
}

// lineErr is an error naming the pass's line.
func (p *tracePass) lineErr(format string, args ...any) error {
	return fmt.Errorf("%w: --trace %s line %d: %w", ErrShape, p.t.path, p.line, fmt.Errorf(format, args...))
}

// finish ends the pass with err (nil: at its end) and closes the file.
func (p *tracePass) finish(err error) {
	if p.done {
		return
	}
	p.done, p.err = true, err
	p.f.Close()
}

// Err is the error that ended the pass (naming the line), nil at its end.
func (p *tracePass) Err() error { return p.err }

// Close ends the pass; after its end a no-op.
func (p *tracePass) Close() error {
	p.finish(p.err)
	return nil
}
