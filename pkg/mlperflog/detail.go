package mlperflog

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// DetailPrefix starts every line of mlperf_log_detail.txt; the submission
// checker's parser requires the first line to start with it.
const DetailPrefix = ":::MLLOG "

// DetailOptions are the constant parts of every detail line's metadata.
type DetailOptions struct {
	// File is written as metadata.file, where LoadGen writes its source file
	// name. Default "netloadgen".
	File string
	// PID and TID are written as metadata.pid and metadata.tid (LoadGen's
	// process and thread ids). The caller chooses them (os.Getpid()) so the
	// formatting stays pure.
	PID, TID int
}

// DetailLog writes mlperf_log_detail.txt: one ":::MLLOG {json}" line per
// event, each line strict JSON after the prefix, with LoadGen's field order
// (logging.h AsyncLog::LogDetail):
//
//	{"key": K, "value": V, "time_ms": T, "namespace": "mlperf::logging",
//	 "event_type": "POINT_IN_TIME", "metadata": {"is_error": B,
//	 "is_warning": B, "file": F, "line_no": N, "pid": P, "tid": T}}
//
// Times are offsets from the log's origin (the caller's clock), written as
// milliseconds with six decimals. Safe for concurrent use; each line is
// one Write to the underlying writer. The first write error is kept and
// returned by every later call.
type DetailLog struct {
	mu       sync.Mutex
	w        io.Writer
	opts     DetailOptions
	buf      []byte
	errors   int
	warnings int
	err      error
}

// NewDetailLog returns a detail log writing to w.
func NewDetailLog(w io.Writer, opts DetailOptions) *DetailLog {
	if opts.File == "" {
		opts.File = "netloadgen"
	}
	return &DetailLog{w: w, opts: opts}
}

// Event is one detail-log line.
type Event struct {
	Key string
	// Value is one of: string, bool, any integer type, float64, float32,
	// time.Duration (written as integer nanoseconds), []int, []int64,
	// []uint64, []string, map[string]string (keys sorted, as LoadGen's
	// std::map prints them).
	Value any
	// At is the time since the log's origin; it must not be negative.
	At time.Duration
	// Error and Warning set metadata.is_error / is_warning and are counted
	// (the summary footer and num_errors).
	Error, Warning bool
	// Line is written as metadata.line_no (LoadGen's source line); 0 is fine.
	Line int
}

// Log writes an ordinary event.
func (d *DetailLog) Log(at time.Duration, key string, value any) error {
	return d.Write(Event{Key: key, Value: value, At: at})
}

// Error writes an error event (LoadGen's MLPERF_LOG_ERROR: keys
// error_invalid_test_settings, error_invalid_config, error_runtime, ...).
func (d *DetailLog) Error(at time.Duration, key string, value any) error {
	return d.Write(Event{Key: key, Value: value, At: at, Error: true})
}

// Warning writes a warning event (LoadGen's MLPERF_LOG_WARNING, key
// warning_generic_message).
func (d *DetailLog) Warning(at time.Duration, key string, value any) error {
	return d.Write(Event{Key: key, Value: value, At: at, Warning: true})
}

// Write writes one event.
func (d *DetailLog) Write(e Event) error {
	if e.Key == "" {
		return fmt.Errorf("%w: empty key", ErrInvalidEvent)
	}
	if e.At < 0 {
		return fmt.Errorf("%w: %q at negative time %v", ErrInvalidEvent, e.Key, e.At)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err != nil {
		return d.err
	}
	b := append(d.buf[:0], DetailPrefix...)
	b = append(b, `{"key": `...)
	b = appendJSONString(b, e.Key)
	b = append(b, `, "value": `...)
	var err error
	if b, err = appendValue(b, e.Value); err != nil {
		return fmt.Errorf("detail key %q: %w", e.Key, err)
	}
	b = append(b, `, "time_ms": `...)
	b = appendTimeMs(b, e.At)
	b = append(b, `, "namespace": "mlperf::logging", "event_type": "POINT_IN_TIME", "metadata": {"is_error": `...)
	b = strconv.AppendBool(b, e.Error)
	b = append(b, `, "is_warning": `...)
	b = strconv.AppendBool(b, e.Warning)
	b = append(b, `, "file": `...)
	b = appendJSONString(b, d.opts.File)
	b = append(b, `, "line_no": `...)
	b = strconv.AppendInt(b, int64(e.Line), 10)
	b = append(b, `, "pid": `...)
	b = strconv.AppendInt(b, int64(d.opts.PID), 10)
	b = append(b, `, "tid": `...)
	b = strconv.AppendInt(b, int64(d.opts.TID), 10)
	b = append(b, "}}\n"...)
	d.buf = b
	if _, err := d.w.Write(b); err != nil {
		d.err = fmt.Errorf("write detail log: %w", err)
		return d.err
	}
	if e.Error {
		d.errors++
	}
	if e.Warning {
		d.warnings++
	}
	return nil
}

// Errors returns how many error events were written (LoadGen's num_errors).
func (d *DetailLog) Errors() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.errors
}

// Warnings returns how many warning events were written.
func (d *DetailLog) Warnings() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.warnings
}

// appendTimeMs writes ns as LoadGen does: whole milliseconds, '.', and the
// remaining nanoseconds zero-padded to six digits.
func appendTimeMs(b []byte, at time.Duration) []byte {
	n := int64(at)
	b = strconv.AppendInt(b, n/1e6, 10)
	b = append(b, '.')
	frac := strconv.AppendInt(nil, n%1e6, 10)
	for range 6 - len(frac) {
		b = append(b, '0')
	}
	return append(b, frac...)
}

// appendValue writes v as LoadGen's ArgValueTransform would, but always as
// valid JSON.
func appendValue(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case string:
		return appendJSONString(b, x), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int8:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int16:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int32:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case uint:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case uint8:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case uint16:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case uint32:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case uint64:
		return strconv.AppendUint(b, x, 10), nil
	case time.Duration:
		return strconv.AppendInt(b, int64(x), 10), nil
	case float64:
		return appendDouble(b, x), nil
	case float32:
		return appendDouble(b, float64(x)), nil
	case []int:
		return appendList(b, x, func(b []byte, v int) []byte { return strconv.AppendInt(b, int64(v), 10) }), nil
	case []int64:
		return appendList(b, x, func(b []byte, v int64) []byte { return strconv.AppendInt(b, v, 10) }), nil
	case []uint64:
		return appendList(b, x, func(b []byte, v uint64) []byte { return strconv.AppendUint(b, v, 10) }), nil
	case []string:
		return appendList(b, x, appendJSONString), nil
	case map[string]string:
		// LoadGen prints a std::map as {"k":"v",...}, keys in order.
		b = append(b, '{')
		for i, k := range slices.Sorted(maps.Keys(x)) {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			b = appendJSONString(b, x[k])
		}
		return append(b, '}'), nil
	}
	return b, fmt.Errorf("%w: %T", ErrUnsupportedValue, v)
}

// appendList writes a vector as LoadGen does: [a,b,c], no spaces.
func appendList[T any](b []byte, xs []T, f func([]byte, T) []byte) []byte {
	b = append(b, '[')
	for i, x := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = f(b, x)
	}
	return append(b, ']')
}

// appendDouble writes a double in the default ostream format LoadGen uses
// (2.43333e+07, 1000, 0.99). A non-finite value would make LoadGen's line
// invalid JSON ("inf"); it is written as that text in a JSON string instead,
// which Python's float() (what the checker applies) still accepts.
func appendDouble(b []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return appendJSONString(b, formatDouble(v))
	}
	return append(b, formatDouble(v)...)
}

// appendJSONString writes s as a JSON string: quotes, backslashes and control
// characters escaped the way LoadGen's EscapeStringJson does, invalid UTF-8
// replaced by U+FFFD so strict decoders accept the line.
func appendJSONString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch c {
			case '"':
				b = append(b, '\\', '"')
			case '\\':
				b = append(b, '\\', '\\')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				if c < 0x20 {
					b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
				} else {
					b = append(b, c)
				}
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, "\ufffd"...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
