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
	f.Add(read("serverview/result.json"), []byte(nil), read("serverview/timeseries.json"), []byte(nil), read("serverview/server_metrics.jsonl"))
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
