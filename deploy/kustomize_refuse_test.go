package deploy

import (
	"os"
	"path/filepath"
	"testing"
)

// TestKustomizeBuildRefuses: the resolver fails on what kustomize would
// fail on or, worse, silently skip.
func TestKustomizeBuildRefuses(t *testing.T) {
	const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}\n"
	cases := []struct {
		name string
		kust string
	}{
		{"missing resource", "resources: [nothere.yaml]"},
		{"a field this resolver does not apply", "resources: [cm.yaml]\ncommonLabels: {a: b}"},
		{"patch of an absent object", "resources: [cm.yaml]\npatches: [{path: patch.yaml}]"},
		{"not a Kustomization", "kind: Component\nresources: [cm.yaml]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			kust := "apiVersion: kustomize.config.k8s.io/v1beta1\n"
			if c.name != "not a Kustomization" {
				kust += "kind: Kustomization\n"
			}
			files := map[string]string{
				"kustomization.yaml": kust + c.kust + "\n",
				"cm.yaml":            cm,
				"patch.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\ndata: {a: c}\n",
			}
			for name, body := range files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if objs, err := kustomizeBuild(dir); err == nil {
				t.Errorf("built %v without an error", objs)
			}
		})
	}
}
