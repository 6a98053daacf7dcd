package kserve

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

// Seeds shared by the fuzz targets' f.Add calls; the committed corpus in
// testdata/fuzz holds more.
var fuzzRequestSeeds = []struct {
	body    string
	jsonLen int    // -2: the header's length, with bin appended
	bin     string // binary section
}{
	{`{"id":"1","inputs":[{"name":"a","datatype":"INT32","shape":[2],"data":[1,2]}]}`, -1, ""},
	{`{"inputs":[{"name":"s","datatype":"BYTES","shape":[2],"data":["x",""]}],"outputs":[{"name":"o","parameters":{"binary_data":true}}]}`, -1, ""},
	{`{"inputs":[{"name":"a","datatype":"UINT8","shape":[2],"parameters":{"binary_data_size":2}}]}`, -2, "\x01\x02"},
	{`{"inputs":[{"name":"s","datatype":"BYTES","shape":[1],"parameters":{"binary_data_size":5}}]}`, -2, "\x01\x00\x00\x00z"},
	{"", 0, "\x00\x01"},
}

func FuzzDecodeInferRequest(f *testing.F) {
	for _, s := range fuzzRequestSeeds {
		body, jsonLen := framed(s.body, s.jsonLen, s.bin)
		if _, err := DecodeInferRequest(body, jsonLen); err != nil && jsonLen != 0 {
			f.Fatalf("seed %q does not decode: %v", body, err)
		}
		f.Add(body, jsonLen)
	}
	f.Fuzz(func(t *testing.T, body []byte, jsonLen int) {
		req, err := DecodeInferRequest(body, jsonLen)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrRawBody) {
				t.Fatalf("error %v wraps neither ErrMalformed nor ErrRawBody", err)
			}
			return
		}
		// Whatever decodes must survive a binary round trip unchanged.
		enc, n, err := EncodeInferRequest(nil, req, true)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		again, err := DecodeInferRequest(enc, n)
		if err != nil {
			t.Fatalf("decode of re-encoded: %v", err)
		}
		for i := range req.Inputs {
			a, b := req.Inputs[i], again.Inputs[i]
			if a.Name != b.Name || a.Datatype != b.Datatype || !reflect.DeepEqual(a.Shape, b.Shape) || !bytes.Equal(a.Data, b.Data) {
				t.Fatalf("input %d changed: %+v -> %+v", i, a, b)
			}
		}
	})
}

func FuzzDecodeInferResponse(f *testing.F) {
	f.Add([]byte(`{"model_name":"m","id":"1","outputs":[{"name":"o","datatype":"FP32","shape":[1,2],"data":[[1.5,-2e3]]}]}`), -1)
	body, jsonLen := framed(`{"model_name":"m","id":"","outputs":[{"name":"o","datatype":"FP16","shape":[1],"parameters":{"binary_data_size":2}}]}`, -2, "\x00\x3c")
	f.Add(body, jsonLen)
	f.Add([]byte(`{"outputs":[{"name":"b","datatype":"BOOL","shape":[2],"data":[true,false]}],"parameters":{"x":1.5}}`), -1)
	f.Fuzz(func(t *testing.T, body []byte, jsonLen int) {
		resp, err := DecodeInferResponse(body, jsonLen)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		flags := make([]bool, len(resp.Outputs))
		for i := range flags {
			flags[i] = true
		}
		enc, n, err := EncodeInferResponse(nil, resp, flags)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		again, err := DecodeInferResponse(enc, n)
		if err != nil {
			t.Fatalf("decode of re-encoded: %v", err)
		}
		if !reflect.DeepEqual(resp.Outputs, again.Outputs) && len(resp.Outputs) > 0 {
			t.Fatalf("outputs changed: %+v -> %+v", resp.Outputs, again.Outputs)
		}
	})
}

func FuzzDecodeJSONData(f *testing.F) {
	f.Add("INT8", []byte(`[[1,-128],[127,0]]`))
	f.Add("FP32", []byte(`[1.5e3, -0.0, 3.4028234663852886e38]`))
	f.Add("BYTES", []byte(`["a\u00e9\ud83d\ude00", "\n"]`))
	f.Add("UINT64", []byte(`[18446744073709551615, 1e3]`))
	f.Add("BOOL", []byte(`[true,false]`))
	f.Fuzz(func(t *testing.T, dt string, data []byte) {
		raw, n, err := DecodeJSONData(nil, DataType(dt), data)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		if c, err := CountElements(DataType(dt), raw); err != nil || c != n {
			t.Fatalf("decoded %d elements but raw holds %d (%v)", n, c, err)
		}
		js, err := AppendJSONData(nil, DataType(dt), raw)
		if err != nil {
			// Only BYTES that are not UTF-8 cannot be written back exactly;
			// anything else decoded must be writable.
			t.Fatalf("re-encode: %v", err)
		}
		raw2, _, err := DecodeJSONData(nil, DataType(dt), js)
		if err != nil {
			t.Fatalf("decode of re-encoded %s: %v", js, err)
		}
		if DataType(dt) != Bytes && !bytes.Equal(raw, raw2) {
			t.Fatalf("round trip changed %v -> %v via %s", raw, raw2, js)
		}
	})
}
