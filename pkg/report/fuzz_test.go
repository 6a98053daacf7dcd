package report_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/report"
)

// files is a run directory in memory.
type files map[string][]byte

func (f files) Open(name string) (io.ReadCloser, error) {
	b, ok := f[name]
	if !ok {
		return nil, fmt.Errorf("%s: %w", name, fs.ErrNotExist)
	}
	return io.NopCloser(bytes.NewReader(b)), nil
}

// FuzzLoad: whatever a run's files hold, Load returns a run or an error
// naming a file (or ErrNoRun), never panics, and a run it returns renders.
func FuzzLoad(f *testing.F) {
	read := func(p string) []byte {
		b, err := os.ReadFile(filepath.Join("testdata", p))
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	f.Add(read("server500/result.json"), read("server500/latency.hlog"), read("server500/timeseries.json"), []byte(nil), []byte(nil))
	f.Add([]byte(nil), []byte(nil), []byte(nil), read("peak/search.json"), []byte(nil))
	f.Add(read("closed8/result.json"), read("closed8/latency.hlog"), []byte(nil), read("sweep/search.json"), []byte(nil))
	// Small, as the fuzzer minimises what it finds: a big seed stalls it.
	f.Add([]byte(`{"scenario":"Server","duration_ns":3000000000,"sample_latency":{"count":9,"mean_ns":2200000},`+
		`"server":{"statistics":{"offered":true,"requests":9,"request_ns":1.8e6,"queue_ns":9.5e5,"compute_infer_ns":8e5,"client_overhead_ns":4e5,"mean_batch_size":1.25}},`+
		`"server_metrics":{"endpoints":[{"url":"u","scrapes":3}],"interval_ms":1000,"errors":{"timeout":1},`+
		`"series":[{"name":"vllm:num_requests_waiting","labels":{},"type":"gauge","first":0,"mean":3,"max":6,"last":0}]}}`), []byte(nil), []byte(nil), []byte(nil),
		[]byte(`{"t":0.1,"endpoint":"u","name":"sutproxy_queue_depth","labels":{"m":"x"},"type":"gauge","value":2}`+"\n"+
			`{"t":0.1,"endpoint":"u","name":"sutproxy_requests_total","labels":{},"type":"counter","value":5}`+"\n"+
			`{"t":1.1,"endpoint":"u","name":"sutproxy_requests_total","labels":{},"type":"counter","value":505}`+"\n"+
			`{"t":1.1,"endpoint":"u","name":"sutproxy_batch_size","labels":{},"type":"histogram","count":4,"sum":5,"buckets":[{"le":"+Inf","count":4}]}`+"\n"+
			`{"t":2.1,"endpoint":"u","name":"sutproxy_batch_size","labels":{},"type":"histogram","count":8,"sum":"NaN"}`+"\n"))
	f.Add([]byte(`{"scenario":"Server","failures":[{"outcome":"<x>","count":-1}],"server":{"statistics":{"offered":true,"requests":1,"request_ns":-1,"queue_ns":1e300}}}`), []byte("0.0,1.0,1.0,HISTFAAAAB\n"),
		[]byte(`{"interval_ns":1,"seconds":[{"second":0,"p99_ns":null}]}`), []byte(`{"trials":[{"target":1e308,"tail_latency_ms":-1}]}`),
		[]byte(`{"t":-1e308,"name":"sutproxy_queue_depth","type":"gauge","value":"-Inf"}`+"\n"+`{"t":1e308,"name":"sutproxy_requests_total","type":"counter","value":1e308}`))
	f.Fuzz(func(t *testing.T, result, hlog, series, search, metrics []byte) {
		src := files{}
		for name, b := range map[string][]byte{"result.json": result, "latency.hlog": hlog, "timeseries.json": series, "search.json": search, "server_metrics.jsonl": metrics} {
			if len(b) > 0 {
				src[name] = b
			}
		}
		r, err := report.Load("run", src)
		if err != nil {
			named := errors.Is(err, report.ErrNoRun)
			for name := range src {
				named = named || strings.HasPrefix(err.Error(), name+": ")
			}
			if !named {
				t.Fatalf("error names no file: %v", err)
			}
			return
		}
		if err := report.Write(io.Discard, []*report.Run{r}, report.Options{}); err != nil {
			t.Fatalf("Write: %v", err)
		}
	})
}
