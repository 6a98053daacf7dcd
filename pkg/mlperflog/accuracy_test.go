package mlperflog

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"regexp"
	"sync"
	"testing"
)

// The layout of LOADGEN-REFERENCE.md §6.3, spelled out.
func TestAccuracyLogLayout(t *testing.T) {
	tests := []struct {
		name    string
		entries []struct {
			seq, idx uint64
			data     []byte
		}
		want string
	}{
		{name: "empty", want: "[\n]\n"},
		{name: "one", entries: []struct {
			seq, idx uint64
			data     []byte
		}{{0, 545, []byte{0x00, 0xab, 0x10, 0xff}}},
			want: "[\n{ \"seq_id\" : 0, \"qsl_idx\" : 545, \"data\" : \"00AB10FF\" }\n]\n"},
		{name: "two, empty data", entries: []struct {
			seq, idx uint64
			data     []byte
		}{{7, 3, []byte{0xde, 0xad}}, {2, 12, nil}},
			want: "[\n{ \"seq_id\" : 7, \"qsl_idx\" : 3, \"data\" : \"DEAD\" },\n{ \"seq_id\" : 2, \"qsl_idx\" : 12, \"data\" : \"\" }\n]\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			a, err := NewAccuracyLog(&b)
			must(t, err)
			for _, e := range tc.entries {
				must(t, a.Add(e.seq, e.idx, e.data))
			}
			must(t, a.Close())
			if b.String() != tc.want {
				t.Errorf("got %q\nwant %q", b.String(), tc.want)
			}
			if !json.Valid(b.Bytes()) {
				t.Error("not valid JSON")
			}
		})
	}
}

type accuracyEntry struct {
	SeqID  uint64 `json:"seq_id"`
	QSLIdx uint64 `json:"qsl_idx"`
	Data   string `json:"data"`
}

func TestAccuracyLogConcurrentAdds(t *testing.T) {
	var b bytes.Buffer
	a, err := NewAccuracyLog(&b)
	must(t, err)
	const workers, per = 8, 200
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range per {
				seq := uint64(w*per + i)
				if err := a.Add(seq, seq%1024, []byte{byte(seq), byte(seq >> 8), 0xfe}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if a.Len() != workers*per {
		t.Errorf("Len() = %d", a.Len())
	}
	must(t, a.Close())
	var entries []accuracyEntry
	dec := json.NewDecoder(&b)
	dec.DisallowUnknownFields()
	must(t, dec.Decode(&entries))
	if len(entries) != workers*per {
		t.Fatalf("%d entries, want %d", len(entries), workers*per)
	}
	upper := regexp.MustCompile(`^[0-9A-F]*$`)
	seen := map[uint64]bool{}
	for _, e := range entries {
		if !upper.MatchString(e.Data) {
			t.Fatalf("data %q is not upper-case hex", e.Data)
		}
		got, err := hex.DecodeString(e.Data)
		must(t, err)
		want := []byte{byte(e.SeqID), byte(e.SeqID >> 8), 0xfe}
		if !bytes.Equal(got, want) || e.QSLIdx != e.SeqID%1024 || seen[e.SeqID] {
			t.Fatalf("entry %+v wrong or repeated", e)
		}
		seen[e.SeqID] = true
	}
}

func TestAccuracyLogAfterClose(t *testing.T) {
	var b bytes.Buffer
	a, err := NewAccuracyLog(&b)
	must(t, err)
	must(t, a.Close())
	must(t, a.Close()) // idempotent
	if err := a.Add(1, 1, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Add after Close: %v", err)
	}
	if b.String() != "[\n]\n" {
		t.Errorf("got %q", b.String())
	}
}

func TestAccuracyLogWriteError(t *testing.T) {
	a, err := NewAccuracyLog(&failWriter{})
	must(t, err) // buffered: the error shows on flush
	must(t, a.Add(1, 2, []byte{1}))
	if err := a.Close(); !errors.Is(err, errDisk) {
		t.Errorf("Close: %v", err)
	}
	if err := a.Add(1, 2, nil); !errors.Is(err, errDisk) {
		t.Errorf("Add after failure: %v", err)
	}
}

// With use_token_latencies LoadGen adds token_count (Offline), or
// token_data then token_count (the other scenarios), after data, in
// LogArgs' `"key" : value` form (logging.cc LogAccuracy).
func TestAccuracyLogTokens(t *testing.T) {
	for _, c := range []struct {
		name string
		mode AccuracyTokens
		want string
	}{
		{"Offline", AccuracyTokensFor(true, true),
			"[\n{ \"seq_id\" : 3, \"qsl_idx\" : 9, \"data\" : \"0A0B\", \"token_count\" : 2 },\n{ \"seq_id\" : 4, \"qsl_idx\" : 1, \"data\" : \"\", \"token_count\" : 0 }\n]\n"},
		{"Server", AccuracyTokensFor(true, false),
			"[\n{ \"seq_id\" : 3, \"qsl_idx\" : 9, \"data\" : \"0A0B\", \"token_data\" : \"0A\", \"token_count\" : 2 },\n{ \"seq_id\" : 4, \"qsl_idx\" : 1, \"data\" : \"\", \"token_data\" : \"\", \"token_count\" : 0 }\n]\n"},
		{"no token latencies", AccuracyTokensFor(false, false),
			"[\n{ \"seq_id\" : 3, \"qsl_idx\" : 9, \"data\" : \"0A0B\" },\n{ \"seq_id\" : 4, \"qsl_idx\" : 1, \"data\" : \"\" }\n]\n"},
	} {
		var b bytes.Buffer
		a, err := NewAccuracyLogTokens(&b, c.mode)
		must(t, err)
		must(t, a.AddTokens(3, 9, []byte{0x0a, 0x0b}, []byte{0x0a}, 2))
		must(t, a.Add(4, 1, nil))
		must(t, a.Close())
		if b.String() != c.want {
			t.Errorf("%s: got %q\nwant %q", c.name, b.String(), c.want)
		}
		if !json.Valid(b.Bytes()) {
			t.Errorf("%s: not valid JSON", c.name)
		}
	}
}
