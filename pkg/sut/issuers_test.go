//go:build linux

package sut

import (
	"context"
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/kserve/httpclient"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// issuerTrace is a Server trace over library's 64 samples.
func issuerTrace(t *testing.T) *trace.Trace {
	t.Helper()
	req := trace.DefaultSettings()
	req.Scenario = trace.Server
	req.ServerTargetQPS = 1000
	req.MinDurationMs = 100
	req.MinQueryCount = 20
	tr, err := trace.New(req, trace.QSL{TotalSampleCount: 64, PerformanceSampleCount: 64})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// Two issuers' adapters of one run: the second sends the first's encoded
// one-sample requests (the same bytes, not a copy) on its own connections,
// and the server answers both.
func TestPrepareShardSendsTheOwnersRequests(t *testing.T) {
	s := startInferServer(t)
	enc, err := httpclient.New(s.url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { enc.Close() })
	open := func() *Adapter {
		a, err := Open(Config{HTTP: enc, Addr: s.url[len("http://"):], Library: library(t, true), MaxConns: 2,
			Options: Options{Model: "m", MaxBatch: 8, WholeQueries: true}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close() })
		if !a.SendsFromIssuer() {
			t.Fatalf("the HTTP loop was not chosen: %T", a.SUT())
		}
		return a
	}
	owner, other, alone := open(), open(), open()
	tr := issuerTrace(t)
	// Not yet prepared: nothing to share, alone encodes its own.
	if err := alone.PrepareShard(t.Context(), tr, Shard{K: 1, N: 3}, owner); err != nil {
		t.Fatal(err)
	}
	if err := owner.PrepareShard(t.Context(), tr, Shard{K: 0, N: 3}, nil); err != nil {
		t.Fatal(err)
	}
	if err := other.PrepareShard(t.Context(), tr, Shard{K: 2, N: 3}, owner); err != nil {
		t.Fatal(err)
	}
	i := tr.LoadedSet[0]
	o, b, c := owner.loop.single[i], other.loop.single[i], alone.loop.single[i]
	if !o.ok || !b.ok || !c.ok || len(o.r) == 0 {
		t.Fatalf("sample %d's request not prepared: owner %v, sharer %v, alone %v", i, o.ok, b.ok, c.ok)
	}
	if &b.r[0] != &o.r[0] {
		t.Error("the sharing issuer holds a copy of the owner's request, not the owner's")
	}
	if &c.r[0] == &o.r[0] || string(c.r) != string(o.r) {
		t.Error("an issuer prepared before its owner does not hold its own copy of the same request")
	}
	for _, a := range []*Adapter{owner, other} {
		sendOne(t, a, i)
	}
	if got := len(s.seen()); got != 2 {
		t.Errorf("the server answered %d requests, want 2 (one per issuer)", got)
	}
}

// sendOne sends sample i as a query on a's loop and polls until it is answered.
func sendOne(t *testing.T, a *Adapter, i int) {
	t.Helper()
	var got *loadgen.Completion
	a.SUT().IssueQuery(t.Context(), loadgen.Query{ID: 1, Samples: []int{i}}, func(c loadgen.Completion) { got = &c })
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for got == nil && ctx.Err() == nil {
		a.SUT().(loadgen.Poller).PollUntil(ctx, time.Now().Add(10*time.Millisecond))
	}
	if got == nil || got.Err != nil {
		t.Fatalf("sample %d: %+v", i, got)
	}
}

// The pool and grpc-go send from a goroutine per request: several issuers
// would split nothing.
func TestSendsFromIssuerOnlyTheEventLoops(t *testing.T) {
	hc, gc := openClients(t)
	for _, tc := range []struct {
		cfg  Config
		want bool
	}{
		{Config{HTTP: hc}, true},
		{Config{HTTP: hc, HTTPClient: HTTPClientPool}, false},
		{Config{GRPC: gc}, true},
		{Config{GRPC: gc, GRPCClient: GRPCClientGRPC}, false},
	} {
		cfg := tc.cfg
		cfg.Addr, cfg.Library, cfg.MaxConns, cfg.Options = "127.0.0.1:1", library(t, true), 4, Options{Model: "m", MaxBatch: 8}
		a, err := Open(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := a.SendsFromIssuer(); got != tc.want {
			t.Errorf("%T: SendsFromIssuer %v, want %v", a.SUT(), got, tc.want)
		}
		a.Close()
	}
}

// Offline's query split between two issuers: each prepares the batches of
// its own share (samples k, k+2, …), cut as it will send them, and none of
// the whole query's.
func TestPrepareShardEncodesItsShareOfOffline(t *testing.T) {
	hc, _ := openClients(t)
	req := trace.DefaultSettings()
	req.Scenario = trace.Offline
	req.OfflineExpectedQPS = 1
	req.MinQueryCount = 40 // Offline's query: 40 samples
	req.MinDurationMs = 0
	tr, err := trace.New(req, trace.QSL{TotalSampleCount: 64, PerformanceSampleCount: 64})
	if err != nil {
		t.Fatal(err)
	}
	q, _ := tr.Cursor().Next()
	for k := range 2 {
		a, err := Open(Config{HTTP: hc, Addr: "127.0.0.1:1", Library: library(t, true), MaxConns: 2,
			Options: Options{Model: "m", MaxBatch: 8, BatchSize: 8}})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		if err := a.PrepareShard(t.Context(), tr, Shard{K: k, N: 2}, nil); err != nil {
			t.Fatal(err)
		}
		var share []int
		for i := k; i < len(q.Samples); i += 2 {
			share = append(share, q.Samples[i])
		}
		want := map[string]bool{}
		for from := 0; from < len(share); from += 8 {
			var key []byte
			for _, s := range share[from:min(from+8, len(share))] {
				key = binary.AppendUvarint(key, uint64(s))
			}
			want[string(key)] = true
		}
		got := a.loop.multi
		if len(got) != len(want) {
			t.Errorf("issuer %d of 2: %d batches prepared, want its share's %d", k, len(got), len(want))
		}
		for key := range want {
			if _, ok := got[key]; !ok {
				t.Errorf("issuer %d of 2: a batch of its share was not prepared", k)
			}
		}
	}
}

// Only the event loops send a shard: the pool refuses one of more than one.
func TestPrepareShardNeedsAnEventLoop(t *testing.T) {
	hc, _ := openClients(t)
	a, err := Open(Config{HTTP: hc, HTTPClient: HTTPClientPool, Addr: "127.0.0.1:1", Library: library(t, true), Options: Options{Model: "m", MaxBatch: 8}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := a.PrepareShard(t.Context(), issuerTrace(t), Shard{K: 1, N: 2}, nil); err == nil || !strings.Contains(err.Error(), "event-loop") {
		t.Errorf("the pool prepared issuer 1 of 2: %v", err)
	}
}
