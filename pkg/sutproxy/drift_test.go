package sutproxy_test

import (
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/pkg/sutproxy/sutproxytest"
)

// The degrade and transient laws through sutproxy's --model flag and both
// transports. Two requests one after the other (the second sent once the
// first is answered) within one period of load (idle=1m): the statistics'
// compute_infer is the simulated time, exact whatever the wall clock did.
func TestDriftModelsOverBothTransports(t *testing.T) {
	cases := []struct {
		name, flag string
		probe      bool // ask if the model is ready between the requests
		want       time.Duration
	}{
		// 2 ms from the period's start; the second starts 2 ms or more into
		// it, past degrade_after: 3 × 2 ms.
		{"degrade", "name=m,max_batch=0,dims=4,latency=constant:2ms,degrade_after=1ms,degrade_factor=3,idle=1m", false, 2*time.Millisecond + 6*time.Millisecond},
		// 1 ms + 50 ms held in the window; the second arrives 51 ms later,
		// past the 1 ms window: 1 ms.
		{"transient", "name=m,max_batch=0,dims=4,latency=constant:1ms,transient=1ms,transient_latency=50ms,idle=1m", false, 51*time.Millisecond + time.Millisecond},
		// restart=probe: the readiness check starts a period, so the second
		// is in a new window and held too.
		{"transient-probe", "name=m,max_batch=0,dims=4,latency=constant:1ms,transient=1ms,transient_latency=50ms,idle=1m,restart=probe", true, 2 * 51 * time.Millisecond},
	}
	for _, c := range cases {
		for _, transport := range []string{"http", "grpc"} {
			t.Run(c.name+"/"+transport, func(t *testing.T) {
				p := sutproxytest.Start(t, c.flag)
				cl := clients(t, p)[map[string]string{"http": "http-binary", "grpc": "grpc"}[transport]]
				for i := range 2 {
					if i == 1 && c.probe {
						if ready, err := cl.ModelReady(t.Context(), "m", ""); !ready || err != nil {
							t.Fatalf("ModelReady: %v, %v", ready, err)
						}
					}
					if _, err := cl.Infer(t.Context(), &kserve.InferRequest{Model: "m", Inputs: []kserve.Tensor{
						{Name: "INPUT0", Datatype: kserve.FP32, Shape: []int64{4}, Data: make([]byte, 16)}}}); err != nil {
						t.Fatal(err)
					}
				}
				st, err := p.Backend().ModelStatistics(t.Context(), "m", "")
				if err != nil {
					t.Fatal(err)
				}
				is := st.ModelStats[0].InferenceStats
				if got := time.Duration(is.ComputeInfer.NS); is.Success.Count != 2 || got != c.want {
					t.Errorf("%d answers, compute_infer %v; want 2 answers, %v", is.Success.Count, got, c.want)
				}
			})
		}
	}
}
