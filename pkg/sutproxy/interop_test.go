package sutproxy_test

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/internal/testtool"
)

// curl speaks to sutproxy with bodies written exactly as the protocol
// documents them: third-party clients send nothing cleverer than this.
func TestCurlREST(t *testing.T) {
	curl := testtool.Need(t, "curl")
	p := startSim(t)
	base := "http://" + p.HTTPAddr()
	run := func(t *testing.T, args ...string) (status int, body []byte) {
		t.Helper()
		args = append([]string{"-sS", "--max-time", "10", "-w", "\n%{http_code}"}, args...)
		out, err := exec.CommandContext(t.Context(), curl, args...).Output()
		if err != nil {
			t.Fatalf("curl %v: %v", args, err)
		}
		i := bytes.LastIndexByte(out, '\n')
		fmt.Sscan(string(out[i+1:]), &status)
		return status, out[:i]
	}

	t.Run("health and metadata", func(t *testing.T) {
		for _, path := range []string{"/v2/health/live", "/v2/health/ready", "/v2/models/simple/ready", "/v2/models/simple/versions/1/ready"} {
			if st, body := run(t, base+path); st != 200 {
				t.Errorf("GET %s = %d %s", path, st, body)
			}
		}
		_, body := run(t, base+"/v2")
		var md struct {
			Name       string   `json:"name"`
			Version    string   `json:"version"`
			Extensions []string `json:"extensions"`
		}
		if err := json.Unmarshal(body, &md); err != nil || md.Name == "" || md.Version == "" {
			t.Errorf("GET /v2 = %s (%v)", body, err)
		}
		_, body = run(t, base+"/v2/models/simple")
		var mm map[string]any
		if err := json.Unmarshal(body, &mm); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"name", "platform", "inputs", "outputs"} {
			if _, ok := mm[k]; !ok {
				t.Errorf("model metadata %s lacks %q", body, k)
			}
		}
	})

	t.Run("json infer", func(t *testing.T) {
		// Nested data, an id, requested outputs: the shapes of the spec's example.
		req := `{
  "id" : "42",
  "inputs" : [
    {
      "name" : "INPUT0",
      "shape" : [ 2, 16 ],
      "datatype" : "INT32",
      "data" : [ [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16], [1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1] ]
    },
    {
      "name" : "INPUT1",
      "shape" : [ 2, 16 ],
      "datatype" : "INT32",
      "data" : [ 1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1, 2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2 ]
    }
  ],
  "outputs" : [
    {
      "name" : "OUTPUT0"
    }
  ]
}`
		st, body := run(t, "-X", "POST", "-H", "Content-Type: application/json", "--data-binary", req, base+"/v2/models/simple/infer")
		if st != 200 {
			t.Fatalf("status %d: %s", st, body)
		}
		var resp struct {
			ModelName string `json:"model_name"`
			ID        string `json:"id"`
			Outputs   []struct {
				Name     string  `json:"name"`
				Shape    []int   `json:"shape"`
				Datatype string  `json:"datatype"`
				Data     []int32 `json:"data"`
			} `json:"outputs"`
		}
		if err := json.Unmarshal(body, &resp); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		want := make([]int32, 32)
		for i := range 16 {
			want[i] = int32(i + 2)
			want[16+i] = 3
		}
		if resp.ModelName != "simple" || resp.ID != "42" || len(resp.Outputs) != 1 || resp.Outputs[0].Name != "OUTPUT0" ||
			resp.Outputs[0].Datatype != "INT32" || !reflect.DeepEqual(resp.Outputs[0].Shape, []int{2, 16}) || !reflect.DeepEqual(resp.Outputs[0].Data, want) {
			t.Errorf("response %s, want only OUTPUT0 = INPUT0 + INPUT1 with id 42", body)
		}
	})

	t.Run("binary infer", func(t *testing.T) {
		raw := make([]byte, 64)
		for i := range 16 {
			binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(float32(i)+0.5))
		}
		header := `{"inputs":[{"name":"INPUT0","shape":[1,16],"datatype":"FP32","parameters":{"binary_data_size":64}}],` +
			`"outputs":[{"name":"OUTPUT0","parameters":{"binary_data":true}}]}`
		body := append([]byte(header), raw...)
		args := []string{"-X", "POST", "-H", fmt.Sprintf("Inference-Header-Content-Length: %d", len(header)),
			"-H", "Content-Type:", "--data-binary", "@-", "-D", "-", base + "/v2/models/identity/infer"}
		cmd := exec.CommandContext(t.Context(), curl, append([]string{"-sS", "--max-time", "10"}, args...)...)
		cmd.Stdin = bytes.NewReader(body)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		head, payload, _ := bytes.Cut(out, []byte("\r\n\r\n"))
		var jsonLen int
		for _, line := range strings.Split(string(head), "\r\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(k, "Inference-Header-Content-Length") {
				fmt.Sscan(strings.TrimSpace(v), &jsonLen)
			}
		}
		if jsonLen <= 0 || jsonLen > len(payload) {
			t.Fatalf("no usable Inference-Header-Content-Length in %q", head)
		}
		if !bytes.Equal(payload[jsonLen:], raw) {
			t.Errorf("binary output %x, want the input echoed %x", payload[jsonLen:], raw)
		}
		if !strings.Contains(string(payload[:jsonLen]), `"binary_data_size":64`) {
			t.Errorf("response header %s lacks binary_data_size 64", payload[:jsonLen])
		}
	})

	t.Run("statistics and config", func(t *testing.T) {
		_, body := run(t, base+"/v2/models/simple/stats")
		var st struct {
			ModelStats []struct {
				Name           string `json:"name"`
				InferenceStats struct {
					Success struct{ Count uint64 } `json:"success"`
				} `json:"inference_stats"`
			} `json:"model_stats"`
		}
		if err := json.Unmarshal(body, &st); err != nil || len(st.ModelStats) != 1 || st.ModelStats[0].InferenceStats.Success.Count < 1 {
			t.Errorf("stats %s (%v): want simple with the inference of the json subtest", body, err)
		}
		_, body = run(t, base+"/v2/models/simple/config")
		var cfg struct {
			Name         string `json:"name"`
			MaxBatchSize int    `json:"max_batch_size"`
			Input        []struct {
				DataType string  `json:"data_type"`
				Dims     []int64 `json:"dims"`
			} `json:"input"`
		}
		if err := json.Unmarshal(body, &cfg); err != nil || cfg.MaxBatchSize <= 0 || len(cfg.Input) != 2 ||
			cfg.Input[0].DataType != "TYPE_INT32" || !reflect.DeepEqual(cfg.Input[0].Dims, []int64{16}) {
			t.Errorf("config %s (%v)", body, err)
		}
	})

	t.Run("errors", func(t *testing.T) {
		if st, body := run(t, base+"/v2/models/missing"); st != 404 || !strings.Contains(string(body), `"error"`) {
			t.Errorf("unknown model = %d %s", st, body)
		}
	})
}

// grpcurl, a third-party client that knows nothing of our .proto, calls
// sutproxy through server reflection.
func TestGrpcurl(t *testing.T) {
	grpcurl := testtool.Need(t, "grpcurl")
	p := startSim(t)
	raw := func(vs ...int32) string { return base64.StdEncoding.EncodeToString(int32s(vs...)) }
	a, b := seq(1, 1), seq(10, 0)
	sum := make([]int32, 16)
	for i := range a {
		sum[i] = a[i] + b[i]
	}
	infer := fmt.Sprintf(`{"model_name":"simple","id":"g1","inputs":[`+
		`{"name":"INPUT0","datatype":"INT32","shape":[1,16]},{"name":"INPUT1","datatype":"INT32","shape":[1,16]}],`+
		`"raw_input_contents":["%s","%s"]}`, raw(a...), raw(b...))
	cases := []struct {
		name, data, method string
		want               []string
	}{
		{"live", "", "ServerLive", []string{`"live": true`}},
		{"metadata", `{"name":"simple"}`, "ModelMetadata", []string{`"name": "INPUT0"`, `"datatype": "INT32"`}},
		{"infer", infer, "ModelInfer", []string{`"id": "g1"`, raw(sum...)}},
		{"statistics", `{"name":"simple"}`, "ModelStatistics", []string{`"name": "simple"`}},
		{"config", `{"name":"simple"}`, "ModelConfig", []string{`"maxBatchSize": 8`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"-plaintext", "-max-time", "10"}
			if tc.data != "" {
				args = append(args, "-d", tc.data)
			}
			args = append(args, p.GRPCAddr(), "inference.GRPCInferenceService/"+tc.method)
			out, err := exec.CommandContext(t.Context(), grpcurl, args...).CombinedOutput()
			if err != nil {
				t.Fatalf("grpcurl %v: %v\n%s", args, err, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("grpcurl %s:\n%s\nwant %q", tc.method, out, w)
				}
			}
		})
	}
}
