package runner

// This file routes a model mix's queries (issue 31, docs/load-shapes.md):
// each entry of the mix is a session of its own (its target, its probe,
// its samples, its SUT), and the engine's one SUT hands each query to the
// session its loadgen.Query.Model indexes.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/shape"
	"github.com/netloadgen/netloadgen/pkg/sut"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// ErrMix marks a mix that cannot run as asked.
var ErrMix = errors.New("model mix")

// mixSet is a mix's sessions, one per entry (index: loadgen.Query.Model).
// The engine's sample library is the first entry's: its QSL indices are
// mapped into each other entry's library as index mod that library's
// size, so every model sends samples of its own.
type mixSet struct {
	parts []*session
	sut   *mixSUT
}

// entrySpec is the run of one entry of spec's mix: its model, and its own
// target and API when it names them. A mix's SUT must be a plain one, the
// engine polling none (an issuer polls one event loop, not several): its
// clients are the HTTP pool and grpc-go, a goroutine per request. The
// run's data files are its model's: the other models take synthetic
// samples. Headers go to the run's target only: a secret is not sent to
// another host the mix names.
func entrySpec(spec Spec, e shape.MixEntry) (Spec, error) {
	sub := spec
	sub.Mix, sub.wrapGen = nil, nil
	sub.Model, sub.SUTName = e.Model, ""
	sub.HTTPClient, sub.GRPCClient = sut.HTTPClientPool, sut.GRPCClientGRPC
	if e.Model != spec.Model {
		sub.ModelVersion, sub.Data = "", ""
	}
	if e.Target != "" && e.Target != spec.Target {
		sub.Target, sub.Headers, sub.TLS = e.Target, nil, nil
	}
	if e.API != "" {
		a, err := genai.ParseAPI(e.API)
		if err != nil {
			return sub, fmt.Errorf("%w: model %s: %w", ErrMix, e.Model, err)
		}
		sub.API = a
	}
	return sub, nil
}

// openMix opens one session per entry of spec's mix and returns the
// first entry's, carrying the set: the run's probe, statistics and API
// are the first model's.
func openMix(ctx context.Context, spec Spec, capture bool) (*session, error) {
	if capture {
		return nil, fmt.Errorf("%w: a mix logs no responses (accuracy_log_sampling_target, accuracy_log_probability): leave them out", ErrMix)
	}
	if n := issuerCount(spec.Settings); n > 1 {
		return nil, fmt.Errorf("%w: %d issuers: a mix's clients send from a goroutine per request, so issuers would split nothing; use 1", ErrMix, n)
	}
	m := &mixSet{}
	for i, e := range spec.Mix {
		sub, err := entrySpec(spec, e)
		if err == nil {
			var ss *session
			ss, err = open(ctx, sub, false)
			m.parts = append(m.parts, ss)
		}
		if err != nil {
			m.parts = m.parts[:i]
			m.close()
			return nil, fmt.Errorf("%w: model %d (%s): %w", ErrMix, i, e.Model, err)
		}
	}
	gen := 0
	for i, p := range m.parts {
		gen += boolInt(p.pr.API != "")
		if p.lib.TotalSampleCount() <= 0 {
			m.close()
			return nil, fmt.Errorf("%w: model %d (%s) has no samples", ErrMix, i, spec.Mix[i].Model)
		}
	}
	if gen != 0 && gen != len(m.parts) {
		m.close()
		return nil, fmt.Errorf("%w: %d of its %d models are generative: mix generative models or tensor models, not both (their records differ)", ErrMix, gen, len(m.parts))
	}
	m.sut = newMixSUT(m.parts, spec.Mix, spec.SUTName, gen != 0)
	first := *m.parts[0]
	first.mix = m
	return &first, nil
}

// close ends every entry's session but the first's, which the session
// carrying the set ends itself.
func (m *mixSet) close() error {
	var errs []error
	for i, p := range m.parts {
		if i == 0 {
			continue
		}
		errs = append(errs, p.close(), p.conn.probe.Close())
	}
	if len(m.parts) > 0 && m.sut == nil {
		// Opening failed: nothing carries the first session either.
		errs = append(errs, m.parts[0].close(), m.parts[0].conn.probe.Close())
	}
	return errors.Join(errs...)
}

// TotalSampleCount and PerformanceSampleCount are the first entry's
// library's: the engine's QSL indices are its.
func (m *mixSet) TotalSampleCount() int       { return m.parts[0].lib.TotalSampleCount() }
func (m *mixSet) PerformanceSampleCount() int { return m.parts[0].lib.PerformanceSampleCount() }

// Load loads each entry's samples: the engine's indices mapped into its
// library.
func (m *mixSet) Load(ctx context.Context, indices []int) error {
	for i, p := range m.parts {
		if err := p.lib.Load(ctx, mapIndices(indices, p.lib.TotalSampleCount())); err != nil {
			return fmt.Errorf("%w: model %d (%s): %w", ErrMix, i, m.sut.names[i], err)
		}
	}
	return nil
}

// Prepare encodes each entry's requests for the trace's loaded samples,
// mapped into its library. A shaped trace's queries are of one sample, so
// each SUT walks the loaded set alone, never the queries.
func (m *mixSet) Prepare(ctx context.Context, tr *trace.Trace) error {
	for i, p := range m.parts {
		mapped := *tr
		mapped.LoadedSet = mapIndices(tr.LoadedSet, p.lib.TotalSampleCount())
		if err := p.sut.Prepare(ctx, &mapped); err != nil {
			return fmt.Errorf("%w: model %d (%s): %w", ErrMix, i, m.sut.names[i], err)
		}
	}
	return nil
}

// preconnect opens each entry's connections before the clock.
func (m *mixSet) preconnect(ctx context.Context, n int) error {
	for i, p := range m.parts {
		if err := p.sut.Preconnect(ctx, n); err != nil {
			return fmt.Errorf("%w: model %d (%s): %w", ErrMix, i, m.sut.names[i], err)
		}
	}
	return nil
}

// mapIndices is indices mod n, a new slice.
func mapIndices(indices []int, n int) []int {
	out := make([]int, len(indices))
	for i, x := range indices {
		out[i] = x % n
	}
	return out
}

func identity(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// mixSUT is the engine's SUT of a mix: each query to its model's SUT,
// its samples mapped into that model's library.
type mixSUT struct {
	suts  []loadgen.SUT
	names []string
	name  string
	gen   bool
	// index[k][i] is the engine's QSL index i in model k's library, made
	// when the mix opens: a query's one sample is a window of it, so
	// issuing allocates nothing (the warm-up's queries too).
	index [][]int
}

func newMixSUT(parts []*session, entries []shape.MixEntry, name string, gen bool) *mixSUT {
	m := &mixSUT{gen: gen}
	total := parts[0].lib.TotalSampleCount()
	for i, p := range parts {
		m.suts = append(m.suts, p.sut.SUT())
		m.names = append(m.names, entries[i].Model)
		m.index = append(m.index, mapIndices(identity(total), p.lib.TotalSampleCount()))
	}
	if name == "" {
		name = "Network SUT (mix: " + strings.Join(m.names, ", ") + ")"
	}
	m.name = name
	return m
}

// IssueQuery sends q to the SUT of its model.
func (m *mixSUT) IssueQuery(ctx context.Context, q loadgen.Query, done func(loadgen.Completion)) {
	k := q.Model
	if k < 0 || k >= len(m.suts) {
		done(q.Done(fmt.Errorf("%w: query %d names model %d of a mix of %d", ErrMix, q.ID, k, len(m.suts))))
		return
	}
	q.Samples = m.mapped(k, q.Samples)
	m.suts[k].IssueQuery(ctx, q, done)
}

// mapped is samples in model k's library.
func (m *mixSUT) mapped(k int, samples []int) []int {
	ix := m.index[k]
	if len(samples) == 1 && samples[0] >= 0 && samples[0] < len(ix) {
		s := samples[0]
		return ix[s : s+1 : s+1]
	}
	out := make([]int, len(samples))
	for i, s := range samples {
		out[i] = ix[s%len(ix)]
	}
	return out
}

// Name is the SUT's name in the logs.
func (m *mixSUT) Name() string { return m.name }

// Generative: the mix's models are generative (all or none, openMix).
func (m *mixSUT) Generative() bool { return m.gen }

// Resends sums the models' resends.
func (m *mixSUT) Resends() uint64 {
	var n uint64
	for _, s := range m.suts {
		if r, ok := s.(loadgen.Resender); ok {
			n += r.Resends()
		}
	}
	return n
}

// Streaming sums the models' samples streaming.
func (m *mixSUT) Streaming() int {
	n := 0
	for _, s := range m.suts {
		if r, ok := s.(loadgen.StreamingSUT); ok {
			n += r.Streaming()
		}
	}
	return n
}

var (
	_ loadgen.GenerativeSUT = (*mixSUT)(nil)
	_ loadgen.Resender      = (*mixSUT)(nil)
	_ loadgen.StreamingSUT  = (*mixSUT)(nil)
)
