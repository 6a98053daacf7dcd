//go:build linux

package sut

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/grpcclient"
	"github.com/netloadgen/netloadgen/kserve/httpclient"
	"github.com/netloadgen/netloadgen/kserve/server/servertest"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/qsl"
)

// TestEveryClientChecksTheAnswers: on each of the four clients (and the two
// that decode answers for accuracy runs), a 200 that
// is not the model's answer (no outputs, another output name, datatype or
// shape, another model) fails its samples with kserve.ErrBadResponse, and
// the model's answer completes them, for a one-sample query, a batched one
// (whose answer's first dimension is the batch) and one cut into batches of
// two (Offline: each answer's first dimension is its chunk's).
func TestEveryClientChecksTheAnswers(t *testing.T) {
	m, httpAddr, grpcAddr := servertest.Start(t)
	lib, err := qsl.NewSynthetic(servertest.Metadata, qsl.SyntheticOptions{Batched: true, Total: 16, Performance: 16, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := lib.Load(t.Context(), []int{0, 1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	hc, err := httpclient.New("http://" + httpAddr)
	if err != nil {
		t.Fatal(err)
	}
	gc, err := grpcclient.New(grpcAddr, grpcclient.WithConns(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hc.Close(); gc.Close() })
	o := Options{Model: servertest.ModelName, MaxBatch: servertest.MaxBatch, WholeQueries: true, Timeout: 5 * time.Second,
		Expect: servertest.Expect()}
	clients := []struct {
		name    string
		cfg     Config
		capture bool // decode every answer (accuracy runs)
		want    string
	}{
		{"HTTP pool", Config{HTTP: hc, Addr: httpAddr, HTTPClient: HTTPClientPool}, false, "*sut.Network"},
		{"HTTP loop", Config{HTTP: hc, Addr: httpAddr, HTTPClient: HTTPClientLoop}, false, "*sut.Loop"},
		{"grpc-go", Config{GRPC: gc, Addr: grpcAddr, GRPCClient: GRPCClientGRPC}, false, "*sut.Network"},
		{"gRPC loop", Config{GRPC: gc, Addr: grpcAddr, GRPCClient: GRPCClientLoop}, false, "*sut.GRPCLoop"},
		{"HTTP capture", Config{HTTP: hc, Addr: httpAddr}, true, "*sut.Network"},
		{"gRPC capture", Config{GRPC: gc, Addr: grpcAddr}, true, "*sut.Network"},
	}
	offline := o
	offline.WholeQueries, offline.BatchSize = false, 2
	for _, cl := range clients {
		for _, o := range []Options{o, offline} {
			cfg := cl.cfg
			cfg.Library, cfg.Options = lib, o
			cfg.Options.Capture = cl.capture
			a, err := Open(cfg)
			if err != nil {
				t.Fatal(err)
			}
			for _, ans := range servertest.Answers {
				m.Set(ans.Answer)
				for _, samples := range [][]int{{1}, {0, 2, 3}} {
					for _, c := range issueAndWait(t, a.SUT(), loadgen.Query{ID: 1, Samples: samples}) {
						if ans.Bad != errors.Is(c.Err, kserve.ErrBadResponse) || !ans.Bad && c.Err != nil {
							t.Errorf("%s (batch size %d): %s, %d samples: samples [%d, %d) completed with %v",
								cl.name, o.BatchSize, ans.Name, len(samples), c.First, c.First+c.Count, c.Err)
						}
					}
				}
			}
			if got := fmt.Sprintf("%T", a.SUT()); got != cl.want {
				t.Errorf("%s: the engine's SUT is a %s", cl.name, got)
			}
			a.Close()
		}
	}
}

// issueAndWait issues q on s and returns its completions once they cover
// its samples, polling s when it is a loadgen.Poller.
func issueAndWait(t *testing.T, s loadgen.SUT, q loadgen.Query) []loadgen.Completion {
	t.Helper()
	got := make(chan loadgen.Completion, len(q.Samples))
	s.IssueQuery(t.Context(), q, func(c loadgen.Completion) { got <- c })
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	p, polled := s.(loadgen.Poller)
	var out []loadgen.Completion
	for n := 0; n < len(q.Samples); {
		if polled {
			// An event loop answers only while it is polled.
			select {
			case c := <-got:
				out, n = append(out, c), n+c.Count
				continue
			default:
			}
			p.PollUntil(ctx, time.Now().Add(10*time.Millisecond))
			if ctx.Err() != nil {
				t.Fatalf("query %d unanswered after 10 s", q.ID)
			}
			continue
		}
		select {
		case c := <-got:
			out, n = append(out, c), n+c.Count
		case <-ctx.Done():
			t.Fatalf("query %d unanswered after 10 s", q.ID)
		}
	}
	return out
}
