package api

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"sigs.k8s.io/yaml"
)

type openAPIDoc struct {
	OpenAPI string                                `json:"openapi"`
	Paths   map[string]map[string]json.RawMessage `json:"paths"`
	Raw     map[string]any                        `json:"-"`
}

func loadOpenAPI(t *testing.T) (openAPIDoc, map[string]any) {
	t.Helper()
	b, err := os.ReadFile("openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		t.Fatalf("openapi.yaml is not valid YAML: %v", err)
	}
	var doc openAPIDoc
	if err := json.Unmarshal(j, &doc); err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(j, &raw); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Fatalf("openapi: %q, want 3.x", doc.OpenAPI)
	}
	return doc, raw
}

// TestOpenAPIRoutes: the spec's operations are exactly Routes.
func TestOpenAPIRoutes(t *testing.T) {
	doc, _ := loadOpenAPI(t)
	var inSpec []string
	for path, item := range doc.Paths {
		for method := range item {
			switch method {
			case "get", "put", "post", "delete", "patch", "head", "options", "trace":
				inSpec = append(inSpec, strings.ToUpper(method)+" "+path)
			}
		}
	}
	var inCode []string
	for _, r := range Routes {
		inCode = append(inCode, r.Pattern())
	}
	sort.Strings(inSpec)
	sort.Strings(inCode)
	if !slices.Equal(inSpec, inCode) {
		t.Errorf("openapi.yaml has %v\napi.Routes has  %v", inSpec, inCode)
	}
	if len(slices.Compact(slices.Clone(inCode))) != len(inCode) {
		t.Errorf("api.Routes repeats a route: %v", inCode)
	}
}

// TestOpenAPIRefs: every $ref points at a component that exists.
func TestOpenAPIRefs(t *testing.T) {
	_, raw := loadOpenAPI(t)
	var walk func(v any)
	n := 0
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if k == "$ref" {
					n++
					ref, _ := e.(string)
					if lookup(raw, ref) == nil {
						t.Errorf("$ref %q does not resolve", ref)
					}
					continue
				}
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(raw)
	if n == 0 {
		t.Fatal("no $ref found: the walk is broken")
	}
}

func lookup(doc map[string]any, ref string) any {
	if !strings.HasPrefix(ref, "#/") {
		return nil
	}
	var cur any = doc
	for _, part := range strings.Split(ref[2:], "/") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[part]
	}
	return cur
}

// TestOpenAPISchemasMatchTypes: each schema's properties are the JSON
// names of the Go type that carries it, so neither drifts alone.
func TestOpenAPISchemasMatchTypes(t *testing.T) {
	_, raw := loadOpenAPI(t)
	cases := []struct {
		ref string
		typ any
	}{
		{"#/components/schemas/RunSpec", RunSpec{}},
		{"#/components/schemas/RunSettings", RunSettings{}},
		{"#/components/schemas/Search", Search{}},
		{"#/components/schemas/TLS", TLS{}},
		{"#/components/schemas/RunCreated", RunCreated{}},
		{"#/components/schemas/RunCheck", RunCheck{}},
		{"#/components/schemas/RunStatus", RunStatus{}},
		{"#/components/schemas/Progress", Progress{}},
		{"#/components/schemas/LiveFailure", LiveFailure{}},
		{"#/components/schemas/LiveTokens", LiveTokens{}},
		{"#/components/schemas/TokenLatencies", TokenLatencies{}},
		{"#/components/schemas/TokenBound", TokenBound{}},
		{"#/components/schemas/Trial", Trial{}},
		{"#/components/schemas/TrialCriteria", TrialCriteria{}},
		{"#/components/schemas/TrialTokenLatencies", TrialTokenLatencies{}},
		{"#/components/schemas/TrialGoodput", TrialGoodput{}},
		{"#/components/schemas/SearchStatus", SearchStatus{}},
		{"#/components/schemas/SearchStage", SearchStage{}},
		{"#/components/schemas/SearchTrialProgress", SearchTrialProgress{}},
		{"#/components/schemas/RunList", RunList{}},
		{"#/components/schemas/StateEvent", StateEvent{}},
		{"#/components/schemas/ProbeRequest", ProbeRequest{}},
		{"#/components/schemas/ProbeResponse", ProbeResponse{}},
		{"#/components/schemas/ProbeResponse/properties/inference", ProbeInference{}},
		{"#/components/schemas/ErrorBody", ErrorBody{}},
		{"#/components/schemas/ErrorBody/properties/error", ErrorDetail{}},
		{"#/components/schemas/Version", Version{}},
		{"#/components/schemas/WorkerReady", WorkerReady{}},
		{"#/components/schemas/WorkerStart", WorkerStart{}},
		{"#/components/schemas/ServerMetadata", kserve.ServerMetadata{}},
		{"#/components/schemas/ModelMetadata", kserve.ModelMetadata{}},
		{"#/components/schemas/TensorMetadata", kserve.TensorMetadata{}},
		{"#/components/schemas/LoadShape", loadgen.LoadShape{}},
		{"#/components/schemas/SLOBoundResult", loadgen.SLOBoundResult{}},
		{"#/components/schemas/StageResult", loadgen.StageResult{}},
		{"#/components/schemas/ModelResult", loadgen.ModelResult{}},
	}
	for _, c := range cases {
		schema, _ := lookup(raw, c.ref).(map[string]any)
		props, _ := schema["properties"].(map[string]any)
		if props == nil {
			t.Errorf("%s: no properties", c.ref)
			continue
		}
		var inSpec []string
		for k := range props {
			inSpec = append(inSpec, k)
		}
		var inGo []string
		for k := range jsonFields(reflect.TypeOf(c.typ)) {
			inGo = append(inGo, k)
		}
		sort.Strings(inSpec)
		sort.Strings(inGo)
		if !slices.Equal(inSpec, inGo) {
			t.Errorf("%s:\n spec %v\n Go   %v", c.ref, inSpec, inGo)
		}
	}
}

// TestOpenAPIEnums: the enumerations the code holds are the spec's.
func TestOpenAPIEnums(t *testing.T) {
	_, raw := loadOpenAPI(t)
	enum := func(ref string) []string {
		s, _ := lookup(raw, ref).(map[string]any)
		list, _ := s["enum"].([]any)
		var out []string
		for _, e := range list {
			out = append(out, e.(string))
		}
		return out
	}
	var states []string
	for _, s := range States() {
		states = append(states, string(s))
	}
	codes := []string{CodeInvalidRequest, CodeUnauthorized, CodeTargetNotAllowed, CodeHostNotAllowed, CodeOriginNotAllowed, CodeNotFound, CodeMethodNotAllowed,
		CodeNotFinished, CodeAlreadyFinished, CodeBodyTimeout, CodeBodyTooLarge, CodeUnsupportedMedia, CodeQueueFull, CodeInternal, CodeUnavailable,
		CodeVersionMismatch, CodeNameTaken, CodeRunEnded}
	var files []string
	params, _ := raw["paths"].(map[string]any)["/v1/runs/{id}/files/{name}"].(map[string]any)["parameters"].([]any)
	for _, p := range params {
		if m, _ := p.(map[string]any); m["name"] == "name" {
			for _, e := range m["schema"].(map[string]any)["enum"].([]any) {
				files = append(files, e.(string))
			}
		}
	}
	for _, c := range []struct {
		what       string
		spec, code []string
	}{
		{"states", enum("#/components/schemas/State"), states},
		{"error codes", enum("#/components/schemas/ErrorBody/properties/error/properties/code"), codes},
		{"run files", files, RunFiles()},
		{"search modes", enum("#/components/schemas/Search/properties/mode"), []string{SearchFindPeak, SearchSweep}},
	} {
		if !slices.Equal(c.spec, c.code) {
			t.Errorf("%s: spec %v, code %v", c.what, c.spec, c.code)
		}
	}
}
