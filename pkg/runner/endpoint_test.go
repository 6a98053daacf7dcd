package runner_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/server/servertest"
	"github.com/netloadgen/netloadgen/pkg/runner"
	"github.com/netloadgen/netloadgen/pkg/sutproxy"
	"github.com/netloadgen/netloadgen/pkg/target"
)

func TestProbeEndpoint(t *testing.T) {
	p, err := sutproxy.Start(t.Context(), sutproxy.Config{HTTPAddr: "127.0.0.1:0", GRPCAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, url := range []string{"http://" + p.HTTPAddr(), "grpc://" + p.GRPCAddr()} {
		t.Run(url, func(t *testing.T) {
			rep, err := runner.ProbeEndpoint(t.Context(), url, "simple", "", nil)
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Live || !rep.Ready || rep.Server.Name != "sutproxy" || !slices.Contains(rep.Extensions, kserve.ExtStatistics) {
				t.Errorf("report %+v", rep)
			}
			if rep.Model == nil || rep.Model.Config == nil || rep.Model.MaxBatch != 8 || len(rep.Model.Model.Inputs) != 2 {
				t.Errorf("model probe %+v", rep.Model)
			}
			if rep.InferenceError != "" || rep.InferenceLatencyMs <= 0 {
				t.Errorf("timed inference: %v ms, error %q", rep.InferenceLatencyMs, rep.InferenceError)
			}
			st, _ := p.Backend().ModelStatistics(t.Context(), "simple", "")
			if st.ModelStats[0].InferenceStats.Success.Count == 0 {
				t.Error("the probe's inference never reached the server")
			}

			bare, err := runner.ProbeEndpoint(t.Context(), url, "", "", nil)
			if err != nil || !bare.Live || bare.Model != nil || bare.InferenceLatencyMs != 0 {
				t.Errorf("probe without a model = %+v, %v", bare, err)
			}
			if _, err := runner.ProbeEndpoint(t.Context(), url, "missing", "", nil); !errors.Is(err, target.ErrTarget) {
				t.Errorf("unknown model: %v, want target.ErrTarget", err)
			}
		})
	}
	if _, err := runner.ProbeEndpoint(t.Context(), "ftp://x:1", "", "", nil); !errors.Is(err, target.ErrTarget) {
		t.Errorf("bad scheme: %v", err)
	}
}

// TestProbeEndpointChecksTheAnswer: the probe's timed inference is checked
// as a run's answers are: a 200 that is not the model's answer is the
// report's inference error.
func TestProbeEndpointChecksTheAnswer(t *testing.T) {
	m, httpAddr, grpcAddr := servertest.Start(t)
	for _, url := range []string{"http://" + httpAddr, "grpc://" + grpcAddr} {
		for _, a := range servertest.Answers {
			m.Set(a.Answer)
			rep, err := runner.ProbeEndpoint(t.Context(), url, servertest.ModelName, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			bad := strings.Contains(rep.InferenceError, kserve.ErrBadResponse.Error())
			if bad != a.Bad || !a.Bad && rep.InferenceError != "" {
				t.Errorf("%s, %s: inference error %q", url, a.Name, rep.InferenceError)
			}
		}
	}
}
