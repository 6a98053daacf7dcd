package api

import (
	"errors"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestOpenAPIWorkerSchemas: the worker schemas' properties are the Go
// types' JSON names, and the state enum is WorkerStates.
func TestOpenAPIWorkerSchemas(t *testing.T) {
	_, raw := loadOpenAPI(t)
	cases := []struct {
		ref string
		typ any
	}{
		{"#/components/schemas/WorkerRegistration", WorkerRegistration{}},
		{"#/components/schemas/WorkerRegistered", WorkerRegistered{}},
		{"#/components/schemas/WorkerHeartbeat", WorkerHeartbeat{}},
		{"#/components/schemas/WorkerHeartbeat/properties/finished", WorkerFinished{}},
		{"#/components/schemas/WorkerHeartbeatAck", WorkerHeartbeatAck{}},
		{"#/components/schemas/WorkerAssignment", WorkerAssignment{}},
		{"#/components/schemas/WorkerClockRequest", WorkerClockRequest{}},
		{"#/components/schemas/WorkerClockResponse", WorkerClockResponse{}},
		{"#/components/schemas/WorkerClock", WorkerClock{}},
		{"#/components/schemas/WorkerInfo", WorkerInfo{}},
		{"#/components/schemas/WorkerList", WorkerList{}},
	}
	for _, c := range cases {
		schema, _ := lookup(raw, c.ref).(map[string]any)
		props, _ := schema["properties"].(map[string]any)
		if props == nil {
			t.Errorf("%s: no properties", c.ref)
			continue
		}
		var inSpec, inGo []string
		for k := range props {
			inSpec = append(inSpec, k)
		}
		for k := range jsonFields(reflect.TypeOf(c.typ)) {
			inGo = append(inGo, k)
		}
		sort.Strings(inSpec)
		sort.Strings(inGo)
		if !slices.Equal(inSpec, inGo) {
			t.Errorf("%s:\n spec %v\n Go   %v", c.ref, inSpec, inGo)
		}
	}
	s, _ := lookup(raw, "#/components/schemas/WorkerState").(map[string]any)
	var enum []string
	for _, e := range s["enum"].([]any) {
		enum = append(enum, e.(string))
	}
	var states []string
	for _, st := range WorkerStates() {
		states = append(states, string(st))
	}
	if !slices.Equal(enum, states) {
		t.Errorf("WorkerState: spec %v, code %v", enum, states)
	}
}

func TestCheckWorkerName(t *testing.T) {
	for _, ok := range []string{"w", "worker-1", "node-3.pool", "a0", strings.Repeat("a", 63)} {
		if err := CheckWorkerName(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for name, want := range map[string]string{
		"":                      "is required",
		strings.Repeat("a", 64): "64 bytes, over 63",
		"Worker":                `'W' at byte 0`,
		"w_1":                   `'_' at byte 1`,
		"w/../x":                `'/' at byte 1`,
		"w 1":                   `' ' at byte 1`,
		"w\n1":                  `'\n' at byte 1`,
		"-w":                    "start and end",
		"w.":                    "start and end",
		"wörker":                "at byte 1",
		"w%2f":                  `'%' at byte 1`,
	} {
		if err := CheckWorkerName(name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", name, err, want)
		}
	}
}

func TestDecodeWorkerRegistration(t *testing.T) {
	reg, err := DecodeWorkerRegistration(strings.NewReader(`{"name":"w-1","version":"v1","address":"10.0.0.2:9090"}`), Limits{})
	if err != nil || reg != (WorkerRegistration{Name: "w-1", Version: "v1", Address: "10.0.0.2:9090"}) {
		t.Fatalf("%+v, %v", reg, err)
	}
	for body, field := range map[string]string{
		`{"name":"w-1","version":"v1","extra":1}`:   "extra",
		`{"name":"W","version":"v1"}`:               "name",
		`{"version":"v1"}`:                          "name",
		`{"name":"w-1"}`:                            "version",
		`{"name":"w-1","version":"v\u0001"}`:        "version",
		`{"name":"w-1","version":"v1","address":7}`: "address",
		``:                                 "",
		`[]`:                               "",
		`{"name":"w-1","version":"v1"} {}`: "",
	} {
		_, err := DecodeWorkerRegistration(strings.NewReader(body), Limits{})
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("%s: %v, want a field error on %q", body, err, field)
		}
	}
	big := `{"name":"w-1","version":"` + strings.Repeat("v", 2<<20) + `"}`
	if _, err := DecodeWorkerRegistration(strings.NewReader(big), Limits{}); !errors.Is(err, ErrBodyTooLarge) {
		t.Errorf("2 MiB: %v", err)
	}
}

func TestDecodeWorkerClockRequest(t *testing.T) {
	if c, err := DecodeWorkerClockRequest(strings.NewReader(`{"seq":1,"t0_ns":5,"prev_t3_ns":4}`), Limits{}); err != nil || c.Seq != 1 {
		t.Fatalf("%+v %v", c, err)
	}
	for body, field := range map[string]string{
		`{"seq":-1,"t0_ns":5}`:                "seq",
		`{"seq":65,"t0_ns":5,"prev_t3_ns":1}`: "seq",
		`{"seq":0,"t0_ns":0}`:                 "t0_ns",
		`{"seq":2,"t0_ns":5}`:                 "prev_t3_ns",
		`{"seq":0,"t0_ns":1.5}`:               "t0_ns",
	} {
		_, err := DecodeWorkerClockRequest(strings.NewReader(body), Limits{})
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("%s: %v, want a field error on %q", body, err, field)
		}
	}
}

func TestDecodeWorkerHeartbeat(t *testing.T) {
	if hb, err := DecodeWorkerHeartbeat(nil, Limits{}); err != nil || hb != (WorkerHeartbeat{}) {
		t.Errorf("empty: %+v %v", hb, err)
	}
	hb, err := DecodeWorkerHeartbeat([]byte(`{"finished":{"run_id":"r1","error":"`+strings.Repeat("e", 5000)+`"}}`), Limits{})
	if err != nil || hb.Finished == nil || len(hb.Finished.Error) != 4096 {
		t.Errorf("long error: %v", err)
	}
	if _, err := DecodeWorkerHeartbeat([]byte(`{"finished":{}}`), Limits{}); err == nil || !strings.Contains(err.Error(), "finished.run_id") {
		t.Errorf("finished without run_id: %v", err)
	}
}
