package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestEveryManifestDecodesStrictly decodes every document of every YAML
// file under deploy/ (kustomizations and patches included: a patch is a
// partial object of its kind, so a misspelt field in it fails too).
func TestEveryManifestDecodesStrictly(t *testing.T) {
	files, err := manifestFiles(".")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("found only %d manifests: %v", len(files), files)
	}
	d := newStrictDecoder()
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if filepath.Base(f) == "kustomization.yaml" {
				if _, err := kustomizeBuild(filepath.Dir(f)); err != nil {
					t.Fatal(err)
				}
				return
			}
			docs := splitDocs(b)
			if len(docs) == 0 {
				t.Fatal("no document")
			}
			for i, doc := range docs {
				if _, err := d.decode(doc); err != nil {
					t.Errorf("document %d: %v", i+1, err)
				}
			}
		})
	}
}

// TestStrictDecoderRefusesTypos makes sure the decoder above can fail:
// each manifest is a good one with one mistake.
func TestStrictDecoderRefusesTypos(t *testing.T) {
	d := newStrictDecoder()
	cases := []struct{ name, doc string }{
		{"unknown field in a container", `apiVersion: apps/v1
kind: Deployment
metadata: {name: x}
spec:
  selector: {matchLabels: {a: b}}
  template:
    metadata: {labels: {a: b}}
    spec:
      containers: [{name: c, image: i:1, readinesProbe: {}}]`},
		{"Job typo", "apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec: {backofflimit: 1, template: {spec: {containers: [{name: c, image: i:1}]}}}"},
		{"duplicate field", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: b}\ndata: {c: d}"},
		{"wrong type", "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {ports: [{port: http}]}"},
		{"unknown kind", "apiVersion: v1\nkind: Servce\nmetadata: {name: x}"},
		{"ServiceMonitor typo", "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata: {name: x}\nspec: {selector: {}, endpoints: [{port: http, scrape_interval: 5s}]}"},
		{"InferenceService typo", "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {name: x}\nspec: {predictor: {model: {modelFormat: {name: onnx}, storageURI: s3://b}}}"},
		{"field name in the wrong case", "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {ports: [{port: 80, targetport: 8080}]}"},
		{"kustomization-style typo in metadata", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, Labels: {a: b}}"},
		{"unknown metadata field", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, label: {a: b}}"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if obj, err := d.decode([]byte(c.doc)); err == nil {
				t.Errorf("decoded %#v without an error", obj)
			}
		})
	}
}

// kustomizations lists every directory holding a kustomization.yaml.
func kustomizations(t *testing.T) []string {
	t.Helper()
	files, err := manifestFiles(".")
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			dirs = append(dirs, filepath.Dir(f))
		}
	}
	return dirs
}

// build resolves dir and decodes each resulting object strictly again: a
// patch can only add fields, and a misplaced one lands on the object.
func build(t *testing.T, dir string) []object {
	t.Helper()
	objs, err := kustomizeBuild(dir)
	if err != nil {
		t.Fatal(err)
	}
	d := newStrictDecoder()
	seen := map[string]bool{}
	for _, o := range objs {
		if seen[o.key()] {
			t.Errorf("%s: %s twice", dir, o.key())
		}
		seen[o.key()] = true
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.decode(b); err != nil {
			t.Errorf("%s: %s after resolution: %v", dir, o.key(), err)
		}
	}
	return objs
}

// TestKustomizeBuilds resolves every kustomization and, when kubectl with a
// kustomize of v4 or later is installed, checks that `kubectl kustomize`
// produces the same objects. (Debian's kubernetes-client bundles kustomize
// v2, which predates the labels and patches fields: it is not used.)
func TestKustomizeBuilds(t *testing.T) {
	kubectl := modernKubectl(t)
	for _, dir := range kustomizations(t) {
		t.Run(dir, func(t *testing.T) {
			objs := build(t, dir)
			if len(objs) == 0 {
				t.Fatal("no objects")
			}
			if kubectl == "" {
				return
			}
			out, err := exec.Command(kubectl, "kustomize", dir).Output()
			if err != nil {
				t.Fatalf("kubectl kustomize %s: %v", dir, err)
			}
			want, err := readObjectsFrom(out)
			if err != nil {
				t.Fatal(err)
			}
			if got, w := byKey(objs), byKey(want); !reflect.DeepEqual(got, w) {
				gj, _ := json.MarshalIndent(got, "", " ")
				wj, _ := json.MarshalIndent(w, "", " ")
				t.Errorf("resolution differs from kubectl kustomize:\nours: %s\nkubectl: %s", gj, wj)
			}
		})
	}
}

func byKey(objs []object) map[string]object {
	m := map[string]object{}
	for _, o := range objs {
		m[o.key()] = o
	}
	return m
}

func readObjectsFrom(b []byte) ([]object, error) {
	var objs []object
	for _, doc := range splitDocs(b) {
		var o object
		if err := yaml.Unmarshal(doc, &o); err != nil {
			return nil, err
		}
		objs = append(objs, o)
	}
	return objs, nil
}

// modernKubectl returns kubectl's path if it bundles kustomize v4 or later.
func modernKubectl(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("kubectl")
	if err != nil {
		t.Log("kubectl not installed: comparing with kustomize skipped")
		return ""
	}
	out, err := exec.Command(p, "version", "--client").CombinedOutput()
	m := regexp.MustCompile(`Kustomize Version: v(\d+)\.`).FindSubmatch(out)
	if err != nil || m == nil || len(m[1]) == 1 && m[1][0] < '4' {
		t.Logf("kubectl's kustomize is older than v4 or unknown (%s): comparing skipped", bytes.TrimSpace(out))
		return ""
	}
	return p
}

// names returns the sorted keys of m, for messages.
func names[V any](m map[string]V) string {
	var s []string
	for k := range m {
		s = append(s, k)
	}
	sort.Strings(s)
	return strings.Join(s, ", ")
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
