package sutproxy_test

import (
	"bufio"
	"bytes"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/sim"
	"github.com/netloadgen/netloadgen/pkg/sutproxy/sutproxytest"
)

// truthLLM is the law BenchmarkLLMTruth loads: 16 sequences, a step of
// 4ms + 0.25ms per sequence + 20us per prefilled token.
const truthLLM = "name=truth,kind=llm,max_seqs=16,step=4ms,per_seq=250us,prefill=20us"

// BenchmarkLLMTruth drives the model with an open-loop Poisson schedule at
// 50% and 90% of its capacity (requests of 32 input and 32 output tokens,
// streamed over OpenAI completions SSE) and compares what a plain client
// measures with the discrete-event truth (sim.LLMTruth) of the same
// schedule, and with sutproxy's own emission record:
//
//	ttft_err_%, tpot_err_%: measured mean TTFT, TPOT vs the truth's
//	emit_gap_us: mean of (client receive − server emission) per token
//
//	go test -run '^$' -bench LLMTruth -benchtime 1x ./pkg/sutproxy
func BenchmarkLLMTruth(b *testing.B) {
	spec, err := sim.ParseModelFlag(truthLLM)
	if err != nil {
		b.Fatal(err)
	}
	capacity, err := sim.LLMCapacity(*spec.LLM, 32, 32)
	if err != nil {
		b.Fatal(err)
	}
	for _, transport := range []string{"sse", "grpc"} {
		for _, load := range []float64{0.5, 0.9} {
			b.Run(transport+"/"+strconv.Itoa(int(load*100))+"pct", func(b *testing.B) {
				for b.Loop() {
					truthRun(b, transport, capacity*load, 300)
				}
			})
		}
	}
}

// tokenTimes is one request's client-side record.
type tokenTimes struct {
	sent time.Time
	at   []time.Time
}

func truthRun(b *testing.B, transport string, rate float64, n int) {
	p, rec := sutproxytest.StartRecording(b, truthLLM)
	r := rand.New(rand.NewPCG(7, uint64(rate)))
	reqs := make([]sim.LLMRequest, n)
	at := time.Duration(0)
	for i := range reqs {
		at += time.Duration(r.ExpFloat64() / rate * float64(time.Second))
		reqs[i] = sim.LLMRequest{At: at, Input: 32, Output: 32}
	}
	start := time.Now().Add(50 * time.Millisecond)
	var got []tokenTimes
	if transport == "sse" {
		got = truthSSE(b, "http://"+p.HTTPAddr()+"/v1/completions", reqs, start)
	} else {
		got = truthGRPC(b, p.GRPCAddr(), reqs, start)
	}
	// The truth of the schedule as sent (send times relative to the first).
	for i := range reqs {
		reqs[i].At = got[i].sent.Sub(start)
	}
	truth, err := sim.LLMTruth(*mustLLM(b).LLM, reqs)
	if err != nil {
		b.Fatal(err)
	}
	var ttft, tpot, ttftT, tpotT, gap, ttftE time.Duration
	gaps := 0
	byID := rec.ByID()
	for i, g := range got {
		if len(g.at) != 32 {
			b.Fatalf("request %d: %d tokens", i, len(g.at))
		}
		ttft += g.at[0].Sub(g.sent)
		tpot += g.at[31].Sub(g.at[0]) / 31
		ttftT += truth[i].TTFT(reqs[i])
		tpotT += truth[i].TPOT()
		em := byID["t"+strconv.Itoa(i)]
		ttftE += em[0].At.Sub(g.sent)
		for k, e := range em {
			gap += g.at[k].Sub(e.At)
			gaps++
		}
	}
	b.ReportMetric(100*(float64(ttft)/float64(ttftT)-1), "ttft_err_%")
	b.ReportMetric(100*(float64(tpot)/float64(tpotT)-1), "tpot_err_%")
	b.ReportMetric(100*(float64(ttftE)/float64(ttftT)-1), "emit_ttft_err_%")
	b.ReportMetric(float64(ttftT/time.Duration(n))/1e6, "truth_ttft_ms")
	b.ReportMetric(float64(tpotT/time.Duration(n))/1e6, "truth_tpot_ms")
	b.ReportMetric(float64(gap/time.Duration(max(gaps, 1)))/1e3, "emit_gap_us")
}

// truthSSE sends each request at its scheduled time on its own goroutine,
// streamed over OpenAI completions.
func truthSSE(b *testing.B, url string, reqs []sim.LLMRequest, start time.Time) []tokenTimes {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	prompt := strings.TrimSpace(strings.Repeat("w ", 32))
	body := `{"model":"truth","prompt":"` + prompt + `","max_tokens":32,"ignore_eos":true,"stream":true}`
	got := make([]tokenTimes, len(reqs))
	var wg sync.WaitGroup
	for i := range reqs {
		time.Sleep(time.Until(start.Add(reqs[i].At))) // the open-loop schedule
		wg.Go(func() { got[i] = streamOnce(b, client, url, body, i) })
	}
	wg.Wait()
	return got
}

// truthGRPC sends each request at its scheduled time on one
// ModelStreamInfer, stamping each response as it is received.
func truthGRPC(b *testing.B, addr string, reqs []sim.LLMRequest, start time.Time) []tokenTimes {
	conn, st := openStream(b, addr)
	defer conn.Close()
	got := make([]tokenTimes, len(reqs))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for finals := 0; finals < len(reqs); {
			m, err := st.Recv()
			if err != nil {
				b.Error(err)
				return
			}
			now := time.Now()
			r := m.GetInferResponse()
			i, _ := strconv.Atoi(strings.TrimPrefix(r.GetId(), "t"))
			got[i].at = append(got[i].at, now)
			if final(r) {
				finals++
			}
		}
	}()
	prompt := strings.TrimSpace(strings.Repeat("w ", 32))
	for i := range reqs {
		time.Sleep(time.Until(start.Add(reqs[i].At)))
		m := llmRequest("truth", "t"+strconv.Itoa(i), prompt, 32, true)
		got[i].sent = time.Now() // before the receiver can see its answer
		if err := st.Send(m); err != nil {
			b.Fatal(err)
		}
	}
	<-done
	return got
}

func mustLLM(b *testing.B) sim.ModelSpec {
	spec, err := sim.ParseModelFlag(truthLLM)
	if err != nil {
		b.Fatal(err)
	}
	return spec
}

// streamOnce sends one streamed request and stamps each token event as
// its line is read.
func streamOnce(b *testing.B, client *http.Client, url, body string, i int) tokenTimes {
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		b.Error(err)
		return tokenTimes{}
	}
	req.Header.Set("X-Request-Id", "t"+strconv.Itoa(i))
	var out tokenTimes
	out.sent = time.Now()
	resp, err := client.Do(req)
	if err != nil {
		b.Error(err)
		return out
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return out
		}
		if bytes.HasPrefix(line, []byte(`data: {`)) {
			out.at = append(out.at, time.Now())
		}
	}
}
