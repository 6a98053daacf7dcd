package compliance

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/sut"
)

// ReadAccuracyLog parses an mlperf_log_accuracy.json: a JSON array of
// {"seq_id", "qsl_idx", "data" (hex)} entries, with token latencies also
// "token_data" (hex) and "token_count".
func ReadAccuracyLog(r io.Reader) ([]loadgen.AccuracyEntry, error) {
	var raw []struct {
		SeqID      *int    `json:"seq_id"`
		QSLIdx     *int    `json:"qsl_idx"`
		Data       *string `json:"data"`
		TokenData  string  `json:"token_data"`
		TokenCount int64   `json:"token_count"`
	}
	if err := json.NewDecoder(r).Decode(&raw); err != nil {
		return nil, fmt.Errorf("accuracy log: not a JSON array of entries: %w", err)
	}
	out := make([]loadgen.AccuracyEntry, len(raw))
	for i, e := range raw {
		if e.SeqID == nil || e.QSLIdx == nil || e.Data == nil {
			return nil, fmt.Errorf("accuracy log: entry %d lacks seq_id, qsl_idx or data", i)
		}
		if *e.QSLIdx < 0 {
			return nil, fmt.Errorf("accuracy log: entry %d: qsl_idx %d is negative", i, *e.QSLIdx)
		}
		b, err := hex.DecodeString(*e.Data)
		if err != nil {
			return nil, fmt.Errorf("accuracy log: entry %d (qsl_idx %d): data is not hex: %w", i, *e.QSLIdx, err)
		}
		var tok []byte
		if e.TokenData != "" {
			tok, err = hex.DecodeString(e.TokenData)
		}
		if err != nil {
			return nil, fmt.Errorf("accuracy log: entry %d (qsl_idx %d): token_data is not hex: %w", i, *e.QSLIdx, err)
		}
		out[i] = loadgen.AccuracyEntry{SeqID: *e.SeqID, QSLIndex: *e.QSLIdx, Data: b, TokenCount: e.TokenCount, TokenData: tok}
	}
	return out, nil
}

// ReadLabels parses a labels file: one integer class per line, line i (from
// 0) the label of QSL index i. Blank lines and lines starting with # are
// not allowed in between: every line is a sample.
func ReadLabels(r io.Reader) ([]int, error) {
	var labels []int
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		t := strings.TrimSpace(sc.Text())
		v, err := strconv.Atoi(t)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("labels: line %d: %q is not a class (a non-negative integer)", line, t)
		}
		labels = append(labels, v)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("labels: %w", err)
	}
	if len(labels) == 0 {
		return nil, fmt.Errorf("labels: the file is empty")
	}
	return labels, nil
}

// Top1Result is a classification accuracy.
type Top1Result struct {
	Correct int `json:"correct"`
	Total   int `json:"total"`
	// Duplicates are entries for a sample already counted (ignored, as
	// MLPerf's accuracy scripts do).
	Duplicates int     `json:"duplicates"`
	Accuracy   float64 `json:"accuracy"` // Correct/Total
}

// Top1 scores the log: each sample's predicted class is the argmax (first
// maximum) of its scores in output `output` (a single INT32/INT64 value is
// the class itself) and is compared with
// labels[qsl_idx]. layout describes the outputs in each entry's bytes; nil
// means the bytes are one FP32 output. output may be "" when there is one.
func Top1(entries []loadgen.AccuracyEntry, labels []int, layout []sut.OutputLayout, output string) (Top1Result, error) {
	var res Top1Result
	if len(entries) == 0 {
		return res, fmt.Errorf("accuracy log: no entries")
	}
	if layout == nil {
		layout = []sut.OutputLayout{{Name: output, Datatype: kserve.FP32}}
	}
	pick := -1
	for i, l := range layout {
		if l.Name == output || (output == "" && len(layout) == 1) {
			pick = i
		}
	}
	if pick < 0 {
		names := make([]string, len(layout))
		for i, l := range layout {
			names[i] = l.Name
		}
		if output == "" {
			return res, fmt.Errorf("the log holds outputs %v: name one with --output", names)
		}
		return res, fmt.Errorf("the log has no output %q (it holds %v)", output, names)
	}
	seen := make(map[int]bool, len(entries))
	for _, e := range entries {
		if seen[e.QSLIndex] {
			res.Duplicates++
			continue
		}
		seen[e.QSLIndex] = true
		if e.QSLIndex >= len(labels) {
			return res, fmt.Errorf("qsl_idx %d has no label (the labels file has %d lines)", e.QSLIndex, len(labels))
		}
		scores, err := outputBytes(e.Data, layout, pick)
		if err != nil {
			return res, fmt.Errorf("qsl_idx %d: %w", e.QSLIndex, err)
		}
		cls, err := argmax(scores, layout[pick].Datatype)
		if err != nil {
			return res, fmt.Errorf("qsl_idx %d: %w", e.QSLIndex, err)
		}
		res.Total++
		if cls == labels[e.QSLIndex] {
			res.Correct++
		}
	}
	res.Accuracy = float64(res.Correct) / float64(res.Total)
	return res, nil
}

// outputBytes finds output pick in a sample's concatenated outputs.
func outputBytes(data []byte, layout []sut.OutputLayout, pick int) ([]byte, error) {
	if len(layout) == 1 {
		return data, nil
	}
	off := 0
	for i, l := range layout {
		n := 0
		count := kserve.ElementCount(l.Shape)
		if size := l.Datatype.Size(); size > 0 {
			n = int(count) * size
		} else {
			for range count {
				if off+n+4 > len(data) {
					return nil, fmt.Errorf("output %q: the data ends early", l.Name)
				}
				n += 4 + int(binary.LittleEndian.Uint32(data[off+n:]))
			}
		}
		if n < 0 || off+n > len(data) {
			return nil, fmt.Errorf("output %q: the data ends early (%d bytes)", l.Name, len(data))
		}
		if i == pick {
			return data[off : off+n], nil
		}
		off += n
	}
	return nil, fmt.Errorf("no output %d", pick)
}

// argmax is the index of the first largest score.
func argmax(b []byte, dt kserve.DataType) (int, error) {
	var at func(i int) float64
	size := dt.Size()
	switch dt {
	case kserve.FP32:
		at = func(i int) float64 { return float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))) }
	case kserve.FP64:
		at = func(i int) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:])) }
	case kserve.Int32:
		at = func(i int) float64 { return float64(int32(binary.LittleEndian.Uint32(b[4*i:]))) }
	case kserve.Int64:
		at = func(i int) float64 { return float64(int64(binary.LittleEndian.Uint64(b[8*i:]))) }
	default:
		return 0, fmt.Errorf("scores of datatype %s: top-1 reads FP32, FP64, INT32 or INT64", dt)
	}
	if len(b) == 0 || len(b)%size != 0 {
		return 0, fmt.Errorf("%d bytes are not a whole number of %s scores", len(b), dt)
	}
	if len(b) == size && (dt == kserve.Int32 || dt == kserve.Int64) {
		return int(at(0)), nil // one integer: the class itself (an argmax model)
	}
	best, bestV := 0, math.Inf(-1)
	for i := range len(b) / size {
		if v := at(i); v > bestV {
			best, bestV = i, v
		}
	}
	return best, nil
}
