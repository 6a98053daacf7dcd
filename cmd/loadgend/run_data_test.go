package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/server"
)

// npyInt32 writes a .npy file by hand (format 1.0: magic, version, header
// length, the header dict padded to 64 bytes, data) of little-endian int32.
func npyInt32(shape string, values []int32) []byte {
	h := fmt.Sprintf("{'descr': '<i4', 'fortran_order': False, 'shape': %s, }", shape)
	for (10+len(h)+1)%64 != 0 {
		h += " "
	}
	h += "\n"
	b := []byte("\x93NUMPY\x01\x00")
	b = binary.LittleEndian.AppendUint16(b, uint16(len(h)))
	b = append(b, h...)
	for _, v := range values {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	return b
}

func row(start int32) []int32 {
	r := make([]int32, 16)
	for i := range r {
		r[i] = start + int32(i)
	}
	return r
}

func rowBytes(r []int32) []byte {
	var b []byte
	for _, v := range r {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	return b
}

func put(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// recordingBackend checks every sample of every request to "simple"
// against the samples in the files: INPUT0 and INPUT1 of one batch row
// must be one file sample's pair, byte for byte.
type recordingBackend struct {
	server.Backend
	pairs map[string]int // INPUT0 bytes + INPUT1 bytes -> sample
	mu    sync.Mutex
	seen  map[int]int // sample -> times sent
	bad   []string
}

func newRecorder(b server.Backend, samples [][2][]int32) *recordingBackend {
	r := &recordingBackend{Backend: b, pairs: map[string]int{}, seen: map[int]int{}}
	for i, s := range samples {
		r.pairs[string(rowBytes(s[0]))+string(rowBytes(s[1]))] = i
	}
	return r
}

func (r *recordingBackend) Infer(ctx context.Context, req *kserve.InferRequest) (*kserve.InferResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(req.Inputs) != 2 || len(req.Inputs[0].Shape) != 2 {
		r.bad = append(r.bad, fmt.Sprintf("request with inputs %d", len(req.Inputs)))
		return r.Backend.Infer(ctx, req)
	}
	in := map[string][]byte{}
	for _, t := range req.Inputs {
		in[t.Name] = t.Data
	}
	n := int(req.Inputs[0].Shape[0])
	for k := range n {
		a, b := in["INPUT0"], in["INPUT1"]
		if len(a) < (k+1)*64 || len(b) < (k+1)*64 {
			r.bad = append(r.bad, "short tensor")
			break
		}
		i, ok := r.pairs[string(a[k*64:(k+1)*64])+string(b[k*64:(k+1)*64])]
		if !ok {
			r.bad = append(r.bad, fmt.Sprintf("row %d of a batch of %d is no file sample", k, n))
			continue
		}
		r.seen[i]++
	}
	return r.Backend.Infer(ctx, req)
}

// TestRunWithData: runs from each data format against sutproxy's "simple"
// reach VALID, and every sample the server receives is a file's sample,
// drawn only from the loaded (performance) set.
func TestRunWithData(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	// Eight samples: INPUT0 row i*100.., INPUT1 row i*100+50...
	var samples [][2][]int32
	for i := range int32(8) {
		samples = append(samples, [2][]int32{row(i * 100), row(i*100 + 50)})
	}
	b64 := func(r []int32) string { return base64.StdEncoding.EncodeToString(rowBytes(r)) }
	layouts := []struct {
		name  string
		write func(t *testing.T, dir string) string
	}{
		{"npy subdirectories", func(t *testing.T, dir string) string {
			for i, s := range samples {
				put(t, dir, fmt.Sprintf("INPUT0/%03d.npy", i), npyInt32("(16,)", s[0]))
				put(t, dir, fmt.Sprintf("INPUT1/%03d.npy", i), npyInt32("(1, 16)", s[1]))
			}
			return dir
		}},
		{"stacked npy and raw", func(t *testing.T, dir string) string {
			var all []int32
			var raw []byte
			for _, s := range samples {
				all = append(all, s[0]...)
				raw = append(raw, rowBytes(s[1])...)
			}
			put(t, dir, "INPUT0.npy", npyInt32("(8, 16)", all))
			put(t, dir, "INPUT1.bin", raw)
			return dir
		}},
		{"perf_analyzer JSON", func(t *testing.T, dir string) string {
			var entries []string
			for i, s := range samples {
				in0 := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(s[0])), ","), "[]")
				if i%2 == 0 {
					entries = append(entries, fmt.Sprintf(`{"INPUT0": [%s], "INPUT1": {"b64": %q}}`, in0, b64(s[1])))
				} else {
					entries = append(entries, fmt.Sprintf(`{"INPUT0": {"content": [%s], "shape": [16]}, "INPUT1": {"content": {"b64": %q}, "shape": [16]}}`, in0, b64(s[1])))
				}
			}
			return put(t, dir, "data.json", []byte(`{"data": [`+strings.Join(entries, ",\n")+`]}`))
		}},
	}
	scenarios := []struct {
		transport string
		args      []string
	}{
		{"grpc", []string{"--scenario", "SingleStream", "--expected-latency-ns", "1000000", "--latency-percentile", "0.9",
			"--min-duration-ms", "200", "--min-query-count", "64"}}, // 64: early stopping's minimum for p90
		{"http", []string{"--scenario", "Server", "--target-qps", "200", "--target-latency-ms", "50", "--latency-percentile", "0.9",
			"--min-duration-ms", "300", "--min-query-count", "40"}},
		{"http-json", []string{"--scenario", "Offline", "--batch-size", "8", "--target-qps", "20000", "--min-duration-ms", "100", "--min-query-count", "1"}},
	}
	for i, l := range layouts {
		// Each layout under one scenario and transport, in turn, so all
		// three formats and all three transports are covered in three runs.
		sc := scenarios[i]
		t.Run(l.name+"/"+sc.transport, func(t *testing.T) {
			p := startProxy(t)
			rec := newRecorder(p.Backend(), samples)
			httpAddr, grpcAddr, _ := serveBackend(t, rec)
			target := "http://" + httpAddr
			if sc.transport == "grpc" {
				target = "grpc://" + grpcAddr
			}
			data := l.write(t, t.TempDir())
			out := t.TempDir()
			args := append([]string{"--target", target, "--model", "simple", "--data", data, "--performance-samples", "4", "--out", out}, transportArgs(sc.transport)...)
			inv := runArgs(append(args, sc.args...)...)
			res := completedRun(t, inv, out)
			if !res.Valid {
				t.Fatalf("INVALID: %q\n%v", res.InvalidReasons, inv)
			}
			if res.QSLTotalSampleCount != 8 || res.QSLPerformanceSampleCount != 4 {
				t.Errorf("QSL reported %d total, %d performance samples; want 8 and 4", res.QSLTotalSampleCount, res.QSLPerformanceSampleCount)
			}
			st := modelStats(t, p.Backend(), "simple")
			rec.mu.Lock()
			defer rec.mu.Unlock()
			if len(rec.bad) > 0 {
				t.Fatalf("%d bad samples, first: %s", len(rec.bad), rec.bad[0])
			}
			sent := 0
			for _, n := range rec.seen {
				sent += n
			}
			if int64(sent) != res.SamplesIssued || st.InferenceCount != uint64(res.SamplesIssued) {
				t.Errorf("%d file samples arrived, server counted %d; the run issued %d", sent, st.InferenceCount, res.SamplesIssued)
			}
			loaded := map[int]bool{}
			for _, i := range res.LoadedSet {
				loaded[i] = true
			}
			for i := range rec.seen {
				if !loaded[i] {
					t.Errorf("sample %d was sent; the loaded set is %v", i, res.LoadedSet)
				}
			}
			if len(res.LoadedSet) != 4 {
				t.Errorf("loaded set %v, want 4 samples", res.LoadedSet)
			}
		})
	}
}

// TestRunBadData: bad sample data stops the run before any request: exit
// 2, one line naming --data, the file and the problem, and the server has
// counted no inference.
func TestRunBadData(t *testing.T) {
	good := npyInt32("(16,)", row(0))
	cases := []struct {
		name  string
		write func(t *testing.T, dir string) string
		file  string // the file the message names
		want  string // the problem
	}{
		{"wrong shape", func(t *testing.T, dir string) string {
			put(t, dir, "INPUT0/0.npy", good)
			put(t, dir, "INPUT1/0.npy", npyInt32("(15,)", row(0)[:15]))
			return dir
		}, "INPUT1/0.npy", "shape mismatch"},
		{"wrong dtype", func(t *testing.T, dir string) string {
			put(t, dir, "INPUT0/0.npy", bytes.Replace(good, []byte("<i4"), []byte("<f4"), 1))
			put(t, dir, "INPUT1/0.npy", good)
			return dir
		}, "INPUT0/0.npy", "datatype mismatch"},
		{"truncated npy", func(t *testing.T, dir string) string {
			put(t, dir, "INPUT0/0.npy", good)
			put(t, dir, "INPUT1/0.npy", good[:len(good)-10])
			return dir
		}, "INPUT1/0.npy", "truncated"},
		{"empty directory", func(t *testing.T, dir string) string { return dir }, "", "no samples"},
		{"stacked file of the wrong shape", func(t *testing.T, dir string) string {
			put(t, dir, "INPUT0.npy", good) // 16 samples of shape ()
			put(t, dir, "INPUT1.npy", npyInt32("(1, 16)", row(0)))
			return dir
		}, "INPUT0.npy", "shape mismatch"},
		{"empty input directory", func(t *testing.T, dir string) string {
			put(t, dir, "INPUT0/0.npy", good)
			if err := os.Mkdir(filepath.Join(dir, "INPUT1"), 0o755); err != nil {
				t.Fatal(err)
			}
			return dir
		}, "INPUT1", "no samples"},
		{"JSON entry missing an input", func(t *testing.T, dir string) string {
			r := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(row(0))), ","), "[]")
			return put(t, dir, "data.json", []byte(`{"data": [{"INPUT0": [`+r+`], "INPUT1": [`+r+`]}, {"INPUT0": [`+r+`]}]}`))
		}, "data.json: entry 1", "missing input"},
	}
	p := startProxy(t)
	for _, tr := range []string{"grpc", "http"} {
		for _, c := range cases {
			t.Run(tr+"/"+c.name, func(t *testing.T) {
				dir := t.TempDir()
				data := c.write(t, dir)
				out := t.TempDir()
				inv := runArgs("--target", targetOf(p, tr), "--model", "simple", "--data", data, "--out", out,
					"--scenario", "SingleStream", "--min-duration-ms", "100", "--min-query-count", "10")
				if inv.code != exitError {
					t.Fatalf("want exit 2: %v", inv)
				}
				line := strings.TrimSuffix(inv.stderr, "\n")
				t.Log(line)
				// The temporary directory's name holds the test's: take it out
				// before looking for the problem.
				msg := strings.ReplaceAll(line, dir, "DIR")
				named := "DIR:"
				if c.file != "" {
					named = "DIR/" + c.file + ":"
				}
				if strings.Contains(line, "\n") || !strings.Contains(line, "--data: ") || !strings.Contains(msg, c.want) ||
					!strings.Contains(msg, named) {
					t.Errorf("stderr %q: want one line naming --data, %s in %s and %q", inv.stderr, c.file, dir, c.want)
				}
				if inv.stdout != "" {
					t.Errorf("stdout %q", inv.stdout)
				}
				if entries, _ := os.ReadDir(out); len(entries) != 0 {
					t.Errorf("%d files written to --out", len(entries))
				}
				if st := modelStats(t, p.Backend(), "simple"); st.InferenceCount != 0 || st.ExecutionCount != 0 {
					t.Errorf("server counted %d inferences in %d executions; want none", st.InferenceCount, st.ExecutionCount)
				}
			})
		}
	}
}
