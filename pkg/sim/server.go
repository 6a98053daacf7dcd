package sim

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/pkg/hrtimer"
	"github.com/netloadgen/netloadgen/pkg/rxstamp"
	"github.com/netloadgen/netloadgen/triton"
)

// ServerName is the name a Server reports in its metadata.
const ServerName = "sutproxy"

// Server is a simulated inference server: a set of models, each version with
// its own queue and instances. It implements kserve/server.Backend.
type Server struct {
	version string
	clk     clock
	timers  *hrtimer.Timers // the real clock's; nil with a test clock
	models  map[string]*model
	names   []string // in the order given to New
	closed  atomic.Bool
}

// model is one ModelSpec and an engine per version.
type model struct {
	spec     ModelSpec
	versions map[string]*engine
	def      *engine // the last version listed
}

// Option configures a Server.
type Option func(*Server)

// WithVersion sets the version the server reports in its metadata (default
// "dev").
func WithVersion(v string) Option { return func(s *Server) { s.version = v } }

// withClock replaces the clock, for tests.
func withClock(c clock) Option { return func(s *Server) { s.clk = c } }

// New validates specs, applies their defaults and returns a Server for them.
func New(specs []ModelSpec, opts ...Option) (*Server, error) {
	s := &Server{version: "dev", models: map[string]*model{}}
	for _, o := range opts {
		o(s)
	}
	if s.clk == nil {
		// Without a timerfd (not Linux, or refused) Go's timers serve.
		timers, _ := hrtimer.New()
		s.timers = timers
		s.clk = realClock{timers: timers}
	}
	if len(specs) == 0 {
		return nil, errors.New("sim: no model to serve")
	}
	for _, spec := range specs {
		n, err := spec.normalized()
		if err != nil {
			return nil, err
		}
		if _, dup := s.models[n.Name]; dup {
			return nil, fmt.Errorf("sim: model %q: name: defined twice", n.Name)
		}
		m := &model{spec: n, versions: map[string]*engine{}}
		for _, v := range n.Versions {
			m.def = newEngine(&m.spec, v, s.clk)
			if n.LLM != nil {
				m.def.llm = newLLMEngine(&m.spec, s.clk, &m.def.req)
			}
			m.versions[v] = m.def
		}
		s.models[n.Name] = m
		s.names = append(s.names, n.Name)
	}
	return s, nil
}

// Close stops admitting requests and fails the queued ones with UNAVAILABLE;
// executions already running end on their own. It is safe to call twice.
func (s *Server) Close() error {
	s.closed.Store(true)
	for _, name := range s.names {
		for _, e := range s.models[name].versions {
			e.close()
			if e.llm != nil {
				e.llm.close()
			}
		}
	}
	if s.timers != nil {
		// Running executions end now rather than on their timers.
		return s.timers.Close()
	}
	return nil
}

// Models returns the normalized specs served, in the order given to New.
func (s *Server) Models() []ModelSpec {
	out := make([]ModelSpec, len(s.names))
	for i, name := range s.names {
		out[i] = s.models[name].spec
	}
	return out
}

func (s *Server) model(name string) (*model, error) {
	m := s.models[name]
	if m == nil {
		return nil, kserve.Errorf(codes.NotFound, "unknown model %q", name)
	}
	return m, nil
}

// engine finds a model's version; "" is the default version.
func (s *Server) engine(name, version string) (*engine, error) {
	m, err := s.model(name)
	if err != nil {
		return nil, err
	}
	if version == "" {
		return m.def, nil
	}
	e := m.versions[version]
	if e == nil {
		return nil, kserve.Errorf(codes.NotFound, "model %q has no version %q", name, version)
	}
	return e, nil
}

// ServerLive is always true: the process answers.
func (s *Server) ServerLive(context.Context) bool { return true }

// ServerReady is true until Close.
func (s *Server) ServerReady(context.Context) bool { return !s.closed.Load() }

// ServerMetadata names the server and the protocol extensions it serves
// ("generate", Triton's HTTP generate extension, when it serves an LLM).
func (s *Server) ServerMetadata(ctx context.Context) kserve.ServerMetadata {
	ext := []string{kserve.ExtBinaryTensorData, kserve.ExtStatistics, kserve.ExtModelConfiguration, kserve.ExtModelRepository}
	if len(s.GenerativeModels(ctx)) > 0 {
		ext = append(ext, ExtGenerate)
	}
	return kserve.ServerMetadata{Name: ServerName, Version: s.version, Extensions: ext}
}

// ExtGenerate is Triton's HTTP generate extension's name in server metadata.
const ExtGenerate = "generate"

// RepositoryIndex lists every model version served, READY until Close
// (Triton's repository index; kserve/server serves it over HTTP).
func (s *Server) RepositoryIndex(context.Context) []triton.RepositoryModel {
	state := "READY"
	if s.closed.Load() {
		state = "UNAVAILABLE"
	}
	var out []triton.RepositoryModel
	for _, name := range s.names {
		for _, e := range s.models[name].sorted() {
			out = append(out, triton.RepositoryModel{Name: name, Version: e.version, State: state})
		}
	}
	return out
}

// ModelReady is true for a known model version until Close.
// A check starts a period of load of a model with restart: probe.
func (s *Server) ModelReady(_ context.Context, name, version string) (bool, error) {
	e, err := s.engine(name, version)
	if err != nil {
		return false, err
	}
	e.probed()
	return !s.closed.Load(), nil
}

// ModelMetadata describes a model's tensors as its spec does.
func (s *Server) ModelMetadata(_ context.Context, name, version string) (kserve.ModelMetadata, error) {
	e, err := s.engine(name, version)
	if err != nil {
		return kserve.ModelMetadata{}, err
	}
	spec := e.spec
	return kserve.ModelMetadata{
		Name:     spec.Name,
		Versions: slices.Clone(spec.Versions),
		Platform: spec.Platform,
		Inputs:   tensorMetadata(spec.Inputs),
		Outputs:  tensorMetadata(spec.Outputs),
	}, nil
}

func tensorMetadata(ts []TensorSpec) []kserve.TensorMetadata {
	out := make([]kserve.TensorMetadata, len(ts))
	for i, t := range ts {
		out[i] = kserve.TensorMetadata{Name: t.Name, Datatype: t.Datatype, Shape: slices.Clone(t.Shape)}
	}
	return out
}

// ModelStatistics answers for one version, every version of a model (version
// ""), or every model (name "").
func (s *Server) ModelStatistics(_ context.Context, name, version string) (triton.StatisticsResponse, error) {
	var engines []*engine
	switch {
	case name == "":
		for _, n := range s.names {
			engines = append(engines, s.models[n].sorted()...)
		}
	case version == "":
		m, err := s.model(name)
		if err != nil {
			return triton.StatisticsResponse{}, err
		}
		engines = m.sorted()
	default:
		e, err := s.engine(name, version)
		if err != nil {
			return triton.StatisticsResponse{}, err
		}
		engines = []*engine{e}
	}
	resp := triton.StatisticsResponse{ModelStats: make([]triton.ModelStatistics, len(engines))}
	for i, e := range engines {
		resp.ModelStats[i] = e.statistics()
	}
	return resp, nil
}

// sorted is the model's engines in the order of its versions.
func (m *model) sorted() []*engine {
	out := make([]*engine, len(m.spec.Versions))
	for i, v := range m.spec.Versions {
		out[i] = m.versions[v]
	}
	return out
}

// Infer checks a request against its model, waits for an instance (and, with
// dynamic batching, for a batch), waits out the execution and answers the
// outputs.
func (s *Server) Infer(ctx context.Context, req *kserve.InferRequest) (*kserve.InferResponse, error) {
	e, err := s.engine(req.Model, req.Version)
	if err != nil {
		return nil, err
	}
	if e.llm != nil {
		return nil, kserve.Errorf(codes.InvalidArgument, "model %q %v", req.Model, errDecoupled)
	}
	clk := e.clk
	st := stampOf(ctx, clk)
	t0 := clk.Now()
	if st != nil {
		t0 = st.Arrival
	}
	c, err := e.check(req)
	if err != nil {
		e.req.fail.add(clk.Now().Sub(t0))
		return nil, err
	}
	var key uint64
	if e.cache != nil {
		key = e.cache.key(c)
		if resp, hit, err := s.answerFromCache(ctx, e, req, c, key, t0); hit {
			return resp, err
		}
	}
	arrival := t0
	if st == nil {
		arrival = clk.Now() // the checks done
	}
	j, err := e.enqueue(c.n, arrival)
	if err == nil {
		err = e.wait(ctx, j, st)
	}
	if err != nil {
		e.req.fail.add(clk.Now().Sub(t0))
		return nil, contextError(err)
	}
	outs, err := compute(e.spec, c.ins, c.n, c.want)
	if err != nil {
		e.req.fail.add(clk.Now().Sub(t0))
		return nil, invalid("%v", err)
	}
	// A caller woken early (the wake lead) still ended no earlier than
	// its execution did, as simulated: the phases add up to success.
	t3 := clk.Now()
	if t3.Before(j.end) {
		t3 = j.end
	}
	r := &e.req
	r.computeInput.add(arrival.Sub(t0))
	r.queue.add(j.start.Sub(arrival))
	r.computeInfer.add(j.end.Sub(j.start))
	r.computeOutput.add(t3.Sub(j.end))
	r.success.add(t3.Sub(t0))
	r.inferences.Add(uint64(c.n))
	r.lastMS.Store(t3.UnixMilli())
	if e.cache != nil {
		e.cache.put(key, outs)
		e.cache.misses.add(t3.Sub(t0))
	}
	return &kserve.InferResponse{Model: e.spec.Name, Version: e.version, ID: req.ID, Outputs: outs}, nil
}

// maxArrivalAge bounds how far back a request's kernel arrival may date its
// service: beyond it the stamp is not this request's (a wall-clock step).
const maxArrivalAge = time.Second

// stampOf is the request's passage through its connection, when the
// transport knows it (rxstamp) and the engine runs on real time: the
// simulated latency then starts at the kernel's arrival time, not after the
// server's own wake-up. nil otherwise.
func stampOf(ctx context.Context, clk clock) *rxstamp.Stamp {
	if _, real := clk.(realClock); !real {
		return nil
	}
	st := rxstamp.FromContext(ctx)
	if st == nil {
		return nil
	}
	if now := clk.Now(); st.Arrival.After(now) || now.Sub(st.Arrival) >= maxArrivalAge {
		return nil
	}
	return st
}

// contextError gives a caller's cancellation the gRPC code it maps to, still
// matching context.Canceled or context.DeadlineExceeded.
func contextError(err error) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%w: %w", kserve.Errorf(codes.DeadlineExceeded, "deadline exceeded while queued or running"), err)
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("%w: %w", kserve.Errorf(codes.Canceled, "request cancelled while queued or running"), err)
	}
	return err
}
