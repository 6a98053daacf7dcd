package grpcloop

import (
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/kserve/genwire"
	"github.com/netloadgen/netloadgen/kserve/grpcclient"
	"github.com/netloadgen/netloadgen/pkg/genai"
	outcomes "github.com/netloadgen/netloadgen/pkg/outcome"
	"github.com/netloadgen/netloadgen/pkg/sutproxy/sutproxytest"
)

var sutproxyLLMInputs = []string{genwire.TextInput, genwire.MaxTokens, genwire.Stream, genwire.IgnoreEOS}

// Against sutproxy's simulated LLM, requests multiplexed on two streams
// each get the tokens they asked for, counted by the server (output_ids),
// and one End; sutproxy's malformed answers (its test faults) fail each
// sample with the outcome grpc-go's Generator gives them.
func TestGeneratorAgainstSutproxy(t *testing.T) {
	faults := []string{"bad_framing", "error_mid", "no_final", "unknown_id"}
	flags := []string{"name=llm,kind=llm,step=1ms,per_seq=0s,prefill=0s"}
	for _, f := range faults {
		flags = append(flags, "name="+f+",kind=llm,step=1ms,fault="+f)
	}
	p := sutproxytest.Start(t, flags...)
	g := newGen(t, p.GRPCAddr(), 2, genwire.Options{Inputs: sutproxyLLMInputs})
	rs := make([]*recorder, 24)
	for i := range rs {
		rs[i] = newRecorder()
		g.Generate(t.Context(), &genai.Request{Model: "llm", Prompt: prompt("hello there", 4+i%5), Stream: true, ID: uint64(i + 1)}, rs[i])
	}
	for i, r := range rs {
		r.wait(t)
		total := 0
		for _, n := range r.tokens {
			total += n
		}
		if r.err != nil || total != 4+i%5 || r.usage.OutputTokens != total || r.ends != 1 || r.after {
			t.Errorf("request %d: tokens %v (usage %d), End %d times: %v; want %d tokens, the server's count, one End", i, r.tokens, r.usage.OutputTokens, r.ends, r.err, 4+i%5)
		}
	}
	c, err := grpcclient.New(p.GRPCAddr(), grpcclient.WithConns(1), grpcclient.WithEagerConnect(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	gg := c.NewGenerator(genwire.Options{Inputs: sutproxyLLMInputs})
	defer gg.Close()
	for i, f := range faults {
		mine, theirs := newRecorder(), newRecorder()
		req := genai.Request{Model: f, Prompt: prompt("hello", 4), Stream: true, ID: uint64(100 + i)}
		g.Generate(t.Context(), &req, mine)
		gg.Generate(t.Context(), &req, theirs)
		mine.wait(t)
		theirs.wait(t)
		m, _ := outcomes.Classify(mine.err)
		want, _ := outcomes.Classify(theirs.err)
		if mine.err == nil || m != want || m != outcomes.Malformed || mine.ends != 1 {
			t.Errorf("fault %s: %s (%v), End %d times; grpc-go's Generator: %s (%v); want malformed, once", f, m, mine.err, mine.ends, want, theirs.err)
		}
	}
}
