package deploy

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"sigs.k8s.io/yaml"
)

// kustomization is the part of kustomize.config.k8s.io/v1beta1
// Kustomization these directories use; decoding strictly into it refuses a
// field this resolver would silently ignore.
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Namespace  string   `json:"namespace,omitempty"`
	Resources  []string `json:"resources,omitempty"`
	Labels     []struct {
		Pairs map[string]string `json:"pairs"`
	} `json:"labels,omitempty"`
	Patches []struct {
		Path string `json:"path"`
	} `json:"patches,omitempty"`
}

// object is one resolved manifest, kept as a generic map so that it can be
// compared with kubectl's output and re-decoded strictly.
type object map[string]any

func (o object) str(path ...string) string {
	var cur any = map[string]any(o)
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = m[p]
	}
	s, _ := cur.(string)
	return s
}

func (o object) key() string {
	return o.str("kind") + "/" + o.str("metadata", "namespace") + "/" + o.str("metadata", "name")
}

func (o object) metadata() map[string]any {
	m, _ := o["metadata"].(map[string]any)
	if m == nil {
		m = map[string]any{}
		o["metadata"] = m
	}
	return m
}

// kustomizeBuild resolves dir the way `kustomize build` does for the
// features kustomization above admits: resources (files and directories,
// recursively), patches (strategic merge for the built-in kinds, JSON merge
// otherwise, matched by kind and name), labels (metadata only, kustomize's
// default) and namespace. Objects come back in resource order.
func kustomizeBuild(dir string) ([]object, error) {
	b, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		return nil, err
	}
	var k kustomization
	if err := unmarshalStrict(b, &k); err != nil {
		return nil, fmt.Errorf("%s/kustomization.yaml: %w", dir, err)
	}
	if k.APIVersion != "kustomize.config.k8s.io/v1beta1" || k.Kind != "Kustomization" {
		return nil, fmt.Errorf("%s/kustomization.yaml: apiVersion %q kind %q", dir, k.APIVersion, k.Kind)
	}
	var objs []object
	for _, r := range k.Resources {
		p := filepath.Join(dir, r)
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("%s: resource %s: %w", dir, r, err)
		}
		if st.IsDir() {
			sub, err := kustomizeBuild(p)
			if err != nil {
				return nil, err
			}
			objs = append(objs, sub...)
			continue
		}
		fileObjs, err := readObjects(p)
		if err != nil {
			return nil, err
		}
		objs = append(objs, fileObjs...)
	}
	for _, pt := range k.Patches {
		patches, err := readObjects(filepath.Join(dir, pt.Path))
		if err != nil {
			return nil, fmt.Errorf("%s: patch: %w", dir, err)
		}
		for _, patch := range patches {
			if err := applyPatch(objs, patch); err != nil {
				return nil, fmt.Errorf("%s: patch %s: %w", dir, pt.Path, err)
			}
		}
	}
	for _, l := range k.Labels {
		for _, o := range objs {
			md := o.metadata()
			labels, _ := md["labels"].(map[string]any)
			if labels == nil {
				labels = map[string]any{}
				md["labels"] = labels
			}
			for name, v := range l.Pairs {
				labels[name] = v
			}
		}
	}
	if k.Namespace != "" {
		for _, o := range objs {
			o.metadata()["namespace"] = k.Namespace
		}
	}
	return objs, nil
}

func readObjects(path string) ([]object, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var objs []object
	for i, doc := range splitDocs(b) {
		var o object
		if err := yaml.Unmarshal(doc, &o); err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", path, i+1, err)
		}
		objs = append(objs, o)
	}
	return objs, nil
}

// patchSchema is the Go type whose struct tags carry kind's strategic
// merge keys (containers merge by name, and so on).
func patchSchema(kind string) (any, bool) {
	switch kind {
	case "Deployment":
		return appsv1.Deployment{}, true
	case "Job":
		return batchv1.Job{}, true
	case "Service":
		return corev1.Service{}, true
	case "ConfigMap":
		return corev1.ConfigMap{}, true
	case "Secret":
		return corev1.Secret{}, true
	}
	return nil, false
}

func applyPatch(objs []object, patch object) error {
	for i, o := range objs {
		if o.str("kind") != patch.str("kind") || o.str("metadata", "name") != patch.str("metadata", "name") {
			continue
		}
		orig, err := json.Marshal(o)
		if err != nil {
			return err
		}
		pb, err := json.Marshal(patch)
		if err != nil {
			return err
		}
		var merged []byte
		if schema, ok := patchSchema(o.str("kind")); ok {
			merged, err = strategicpatch.StrategicMergePatch(orig, pb, schema)
		} else {
			merged, err = mergePatch(orig, pb)
		}
		if err != nil {
			return err
		}
		var out object
		if err := json.Unmarshal(merged, &out); err != nil {
			return err
		}
		objs[i] = out
		return nil
	}
	return fmt.Errorf("no %s %q to patch", patch.str("kind"), patch.str("metadata", "name"))
}

// mergePatch is RFC 7386's JSON merge patch.
func mergePatch(orig, patch []byte) ([]byte, error) {
	var o, p any
	if err := json.Unmarshal(orig, &o); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(patch, &p); err != nil {
		return nil, err
	}
	return json.Marshal(mergeValue(o, p))
}

func mergeValue(o, p any) any {
	pm, ok := p.(map[string]any)
	if !ok {
		return p
	}
	om, ok := o.(map[string]any)
	if !ok {
		om = map[string]any{}
	}
	for k, v := range pm {
		if v == nil {
			delete(om, k)
			continue
		}
		om[k] = mergeValue(om[k], v)
	}
	return om
}
