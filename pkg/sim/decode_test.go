package sim

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/kserve"
)

func TestLoadFile(t *testing.T) {
	want := []ModelSpec{
		{
			Name: "resnet-ish", Versions: []string{"1", "2"}, Platform: "onnxruntime_onnx", MaxBatchSize: 16,
			Inputs:   []TensorSpec{{Name: "images", Datatype: kserve.FP32, Shape: []int64{-1, 3, 32, 32}}},
			Function: Classify, NumClasses: 10,
			Latency: LatencySpec{Distribution: LogNormal, Median: Duration(3 * time.Millisecond), Sigma: 0.2,
				PerSample: Duration(150 * time.Microsecond)},
			Instances:       2,
			DynamicBatching: &BatchingSpec{MaxBatchSize: 8, MaxQueueDelay: Duration(500 * time.Microsecond)},
			Seed:            42,
		},
		{
			Name:     "raw",
			Inputs:   []TensorSpec{{Name: "x", Datatype: kserve.Uint8, Shape: []int64{-1}}},
			Function: Echo,
			Latency:  LatencySpec{Distribution: Empirical, Samples: []Duration{Duration(ms), Duration(2 * ms), Duration(10 * ms)}},
		},
	}
	for _, file := range []string{"models.json", "models.yaml", "models.conf"} {
		t.Run(file, func(t *testing.T) {
			got, err := LoadFile(filepath.Join("testdata", file))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
			if _, err := New(got); err != nil {
				t.Errorf("New: %v", err)
			}
		})
	}
}

func TestDecodeRejects(t *testing.T) {
	const good = `{"name": "m", "inputs": [{"name": "x", "datatype": "FP32", "shape": [4]}], "function": "echo"}`
	edit := func(old, new string) string { return `{"models": [` + strings.Replace(good, old, new, 1) + `]}` }
	tests := []struct {
		name  string
		json  string
		field string // the field the error must name
	}{
		{"unknown field", edit(`"function"`, `"latncy": {}, "function"`), "latncy"},
		{"unknown nested field", edit(`"function"`, `"latency": {"distribution": "constant", "valu": "1ms"}, "function"`), "latency.valu"},
		{"unknown tensor field", edit(`"shape"`, `"dims": [1], "shape"`), "inputs[0].dims"},
		{"duration as number", edit(`"function"`, `"latency": {"distribution": "constant", "value": 2}, "function"`), "latency.value"},
		{"bad duration", edit(`"function"`, `"latency": {"distribution": "constant", "value": "2 ms"}, "function"`), "latency.value"},
		{"bad duration in a list", edit(`"function"`, `"latency": {"distribution": "empirical", "samples": ["1ms", "x"]}, "function"`), "latency.samples[1]"},
		{"string for int", edit(`"function"`, `"instances": "4", "function"`), "instances"},
		{"negative instances", edit(`"function"`, `"instances": -1, "function"`), "instances"},
		{"unknown distribution", edit(`"function"`, `"latency": {"distribution": "gaussian"}, "function"`), "latency.distribution"},
		{"field of another distribution", edit(`"function"`, `"latency": {"distribution": "constant", "value": "1ms", "sigma": 0.5}, "function"`), "latency.sigma"},
		{"uniform max below min", edit(`"function"`, `"latency": {"distribution": "uniform", "min": "3ms", "max": "1ms"}, "function"`), "latency.max"},
		{"lognormal without median", edit(`"function"`, `"latency": {"distribution": "lognormal", "sigma": 0.5}, "function"`), "latency.median"},
		{"empty empirical", edit(`"function"`, `"latency": {"distribution": "empirical", "samples": []}, "function"`), "latency.samples"},
		{"negative duration", edit(`"function"`, `"latency": {"distribution": "constant", "value": "-1ms"}, "function"`), "latency.value"},
		{"unknown datatype", edit(`"FP32"`, `"FP33"`), "inputs[0].datatype"},
		{"zero dimension", edit(`[4]`, `[0]`), "inputs[0].shape"},
		{"batch dim missing", edit(`"function"`, `"max_batch_size": 4, "function"`), "inputs[0].shape"},
		{"unknown function", edit(`"echo"`, `"sum"`), "function"},
		{"classify without classes", edit(`"echo"`, `"classify"`), "num_classes"},
		{"add_sub with one input", edit(`"echo"`, `"add_sub"`), "inputs"},
		{"batching without batch dim", edit(`"function"`, `"dynamic_batching": {"max_queue_delay": "1ms"}, "function"`), "dynamic_batching"},
		{"echo output of another type", edit(`"function"`, `"outputs": [{"name": "y", "datatype": "INT8", "shape": [4]}], "function"`), "outputs[0].datatype"},
		{"duplicate input", edit(`"inputs": [{"name": "x", "datatype": "FP32", "shape": [4]}]`, `"inputs": [{"name": "x", "datatype": "FP32", "shape": [4]}, {"name": "x", "datatype": "FP32", "shape": [4]}]`), "inputs[1].name"},
		{"duplicate version", edit(`"function"`, `"versions": ["1", "1"], "function"`), "versions[1]"},
		{"bad name", edit(`"m"`, `"a/b"`), "name"},
		{"models not a list", `{"models": {}}`, "models"},
		{"unknown top-level key", `{"models": [` + good + `], "model": []}`, "model"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeJSON([]byte(tt.json))
			if err == nil {
				t.Fatal("accepted")
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.field+":") {
				t.Errorf("error %q does not name field %q", msg, tt.field)
			}
			if !strings.HasPrefix(tt.field, "model") && tt.field != "name" && !strings.Contains(msg, `"m"`) {
				t.Errorf("error %q does not name the model", msg)
			}
		})
	}
}

func TestDecodeYAMLRejects(t *testing.T) {
	_, err := DecodeYAML([]byte("models:\n  - name: yolo\n    function: echo\n    inputs: [{name: x, datatype: FP32, shape: [4]}]\n    instanses: 2\n"))
	if err == nil || !strings.Contains(err.Error(), "instanses") || !strings.Contains(err.Error(), `"yolo"`) {
		t.Errorf("YAML with a misspelt field: %v", err)
	}
}

func TestLoadFileMissing(t *testing.T) {
	_, err := LoadFile(filepath.Join(t.TempDir(), "none.yaml"))
	if !os.IsNotExist(errorsUnwrapAll(err)) {
		t.Errorf("missing file: %v", err)
	}
}

func errorsUnwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}
