package loadgen

import (
	"fmt"
	"math"
	"math/bits"
	"sync/atomic"

	"github.com/netloadgen/netloadgen/pkg/rng"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// AccuracyEntry is one logged response: a line of mlperf_log_accuracy.json.
type AccuracyEntry struct {
	SeqID    int    // the sample's sequence number in the run (Query.FirstSample+j)
	QSLIndex int    // the sample's QSL index
	Data     []byte // the response bytes
	// TokenCount and TokenData are a generative sample's output tokens
	// and first token's content (Completion.Tokens, FirstTokenData): the
	// log's token_count and token_data with use_token_latencies.
	TokenCount int64
	TokenData  []byte
}

// entryOf is sample j of a completion as the accuracy log holds it.
func entryOf(seq, qslIndex int, c *Completion, j int) AccuracyEntry {
	return AccuracyEntry{SeqID: seq, QSLIndex: qslIndex, Data: c.Data[j-c.First], TokenCount: int64(c.Tokens), TokenData: c.FirstTokenData}
}

// accuracyLogDefaultSeed is the seed of LoadGen's per-sample accuracy-log
// engine: SequenceGen's mt19937 is default-constructed and never reseeded
// (LOADGEN-REFERENCE §3.1), so it is std::mt19937's default, 5489.
const accuracyLogDefaultSeed = 5489

// AccuracyLogProbability is the probability with which a performance run
// logs a sample's response (LOADGEN-REFERENCE §7.1, TEST01): with
// accuracy_log_sampling_target set, the target over the expected sample
// count uint64(target_qps × min_duration_ms / 1000), times samples per query
// except for Offline, and at least min_sample_count; otherwise
// accuracy_log_probability. 0 means nothing is logged.
func AccuracyLogProbability(s Settings, e trace.Effective) float64 {
	if s.AccuracyLogSamplingTarget == 0 {
		return s.AccuracyLogProbability
	}
	expected := uint64(0)
	if v := e.TargetQPS * float64(e.MinDurationMs) / 1000; v > 0 && v < math.MaxUint64 {
		expected = uint64(v)
	}
	if e.Scenario != trace.Offline {
		expected *= e.SamplesPerQuery
	}
	expected = max(expected, e.MinSampleCount)
	if expected == 0 {
		return 1
	}
	return float64(s.AccuracyLogSamplingTarget) / float64(expected)
}

// accuracySampler holds a performance run's sampled accuracy log. Which
// samples are logged is fixed before the run: sample seq is logged iff
// frac(val_seq + offset) ≤ prob, where offset is the first uniform_real(0,1)
// draw of mt19937(accuracy_log_rng_seed) and val_seq the seq-th draw of a
// default-seeded mt19937, one per sample in creation (trace) order.
//
// The trace holds no query, so the issuer notes each selected sample's QSL
// index as its query goes out (issued), in a slot by the sample's rank
// among the selected: 4 bytes a logged sample, and 4 per 64 samples of
// rank, instead of the run's queries.
type accuracySampler struct {
	selected []uint64 // bit per sample sequence number
	rank     []uint32 // per word of selected: selected samples before it
	index    []int32  // per selected sample (by rank): its QSL index
	entries  []AccuracyEntry
	n        atomic.Int64
}

// newAccuracySampler selects among samples; QSL indices are below qslEnd
// (the loaded set's end), which must fit the int32 slots.
func newAccuracySampler(prob float64, seed uint64, samples, qslEnd int) (*accuracySampler, error) {
	if qslEnd > math.MaxInt32+1 {
		return nil, fmt.Errorf("%w: performance_sample_count %d: the sampled accuracy log keeps QSL indices below 2^31", trace.ErrInvalidSettings, qslEnd)
	}
	a := &accuracySampler{selected: make([]uint64, (samples+63)/64)}
	offset := rng.UniformReal(rng.NewMT19937(seed), 0, 1)
	g := rng.NewMT19937(accuracyLogDefaultSeed)
	count := 0
	for seq := range samples {
		v := rng.UniformReal(g, 0, 1) + offset
		if v >= 1 {
			v--
		}
		if v <= prob {
			a.selected[seq/64] |= 1 << (seq % 64)
			count++
		}
	}
	a.rank = make([]uint32, len(a.selected))
	r := 0
	for w, word := range a.selected {
		a.rank[w] = uint32(r) // samples ≤ trace.MaxSamples < 2^32
		r += bits.OnesCount64(word)
	}
	a.index = make([]int32, count)
	a.entries = make([]AccuracyEntry, count)
	return a, nil
}

func (a *accuracySampler) isSelected(seq int) bool {
	return a.selected[seq/64]&(1<<(seq%64)) != 0
}

// slot is selected sample seq's rank among the selected.
func (a *accuracySampler) slot(seq int) int {
	w := seq / 64
	return int(a.rank[w]) + bits.OnesCount64(a.selected[w]&(1<<(seq%64)-1))
}

// issued notes the QSL indices of a query's selected samples, first its
// first sample's sequence number. The issuer calls it before the query
// goes out; it skips unselected samples a word at a time (Offline's one
// query of every sample costs a word load per 64 samples).
func (a *accuracySampler) issued(first int, samples []int) {
	end := first + len(samples)
	for seq := first; seq < end; {
		w := a.selected[seq/64] >> (seq % 64)
		if w == 0 {
			seq = (seq/64 + 1) * 64
			continue
		}
		seq += bits.TrailingZeros64(w)
		if seq >= end {
			return
		}
		a.index[a.slot(seq)] = int32(samples[seq-first])
		seq++
	}
}

// add logs sample j of a completion if it is selected; concurrent calls
// write distinct slots, in completion order.
func (a *accuracySampler) add(seq int, c *Completion, j int) {
	if !a.isSelected(seq) {
		return
	}
	if i := a.n.Add(1) - 1; i < int64(len(a.entries)) {
		a.entries[i] = entryOf(seq, int(a.index[a.slot(seq)]), c, j)
	}
}

func (a *accuracySampler) logged() []AccuracyEntry {
	return a.entries[:min(a.n.Load(), int64(len(a.entries)))]
}

// LogsResponses reports whether the run logs sampled responses (TEST01's
// accuracy_log_sampling_target or accuracy_log_probability): the SUT must
// then capture response bytes in Completion.Data.
func (r *Run) LogsResponses() bool { return r.acc != nil }

// AccuracyLog returns the sampled responses in completion order, LoadGen's
// mlperf_log_accuracy.json for a performance run. Read it only after
// Execute has returned.
func (r *Run) AccuracyLog() []AccuracyEntry {
	if r.acc == nil {
		return nil
	}
	return r.acc.logged()
}

// AccuracyLogSelected reports whether sample seq is one the run logs.
func (r *Run) AccuracyLogSelected(seq int) bool {
	return r.acc != nil && seq >= 0 && seq < r.n*r.spq && r.acc.isSelected(seq)
}
