package deploy

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// ServiceMonitor is the part of the Prometheus Operator's
// monitoring.coreos.com/v1 ServiceMonitor these manifests use. The
// operator's own Go types are a module of their own with a large tree; a
// strict decode into the fields we set catches the same typos, and a field
// we start using must be added here first.
type ServiceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Selector          metav1.LabelSelector `json:"selector"`
		NamespaceSelector *struct {
			MatchNames []string `json:"matchNames,omitempty"`
			Any        bool     `json:"any,omitempty"`
		} `json:"namespaceSelector,omitempty"`
		Endpoints []struct {
			Port          string `json:"port"`
			Path          string `json:"path,omitempty"`
			Scheme        string `json:"scheme,omitempty"`
			Interval      string `json:"interval,omitempty"`
			ScrapeTimeout string `json:"scrapeTimeout,omitempty"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// InferenceService is the part of KServe's serving.kserve.io/v1beta1
// InferenceService these manifests use (KServe's Go types pull in Knative
// and more).
type InferenceService struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Predictor struct {
			MinReplicas *int32 `json:"minReplicas,omitempty"`
			MaxReplicas int32  `json:"maxReplicas,omitempty"`
			Model       *struct {
				ModelFormat struct {
					Name    string `json:"name"`
					Version string `json:"version,omitempty"`
				} `json:"modelFormat"`
				Runtime         string                      `json:"runtime,omitempty"`
				ProtocolVersion string                      `json:"protocolVersion,omitempty"`
				StorageURI      string                      `json:"storageUri,omitempty"`
				Resources       corev1.ResourceRequirements `json:"resources,omitempty"`
			} `json:"model,omitempty"`
		} `json:"predictor"`
	} `json:"spec"`
}

// scheme knows the built-in kinds the manifests may hold.
func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, batchv1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err) // a registration conflict in k8s.io/api itself
		}
	}
	return s
}

// strictDecoder decodes YAML or JSON into the registered Go types, failing
// on unknown and duplicate fields as `kubectl apply --validate=strict`
// does.
type strictDecoder struct {
	scheme *runtime.Scheme
	codecs serializer.CodecFactory
}

func newStrictDecoder() strictDecoder {
	s := newScheme()
	return strictDecoder{scheme: s, codecs: serializer.NewCodecFactory(s, serializer.EnableStrict)}
}

// decode returns the typed object of one manifest document. The CRD kinds
// go through sigs.k8s.io/yaml's strict mode into the structs above.
func (d strictDecoder) decode(doc []byte) (any, error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return nil, err
	}
	var crd any
	switch tm.GroupVersionKind().String() {
	case "monitoring.coreos.com/v1, Kind=ServiceMonitor":
		crd = &ServiceMonitor{}
	case "serving.kserve.io/v1beta1, Kind=InferenceService":
		crd = &InferenceService{}
	}
	if crd != nil {
		if err := unmarshalStrict(doc, crd); err != nil {
			return nil, fmt.Errorf("%s: %w", tm.Kind, err)
		}
		return crd, nil
	}
	obj, gvk, err := d.codecs.UniversalDeserializer().Decode(doc, nil, nil)
	if err != nil {
		// A strict error comes with a decoded object; it is still a typo.
		return nil, fmt.Errorf("%s %s: %w", tm.APIVersion, tm.Kind, err)
	}
	if gvk.Version == "" || gvk.Kind == "" {
		return nil, fmt.Errorf("no apiVersion or kind")
	}
	return obj, nil
}

// unmarshalStrict decodes YAML into v as the API server does: field names
// match case-sensitively (encoding/json alone would take storageURI for
// storageUri), and unknown or duplicate fields are errors.
func unmarshalStrict(doc []byte, v any) error {
	j, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return err
	}
	strict, err := kjson.UnmarshalStrict(j, v, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err != nil {
		return err
	}
	return errors.Join(strict...)
}

// splitDocs cuts a YAML stream at its "---" lines, dropping empty and
// comment-only documents.
func splitDocs(b []byte) [][]byte {
	var docs [][]byte
	for _, part := range bytes.Split(append([]byte("\n"), b...), []byte("\n---")) {
		keep := false
		for _, line := range strings.Split(string(part), "\n") {
			if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "#") {
				keep = true
				break
			}
		}
		if keep {
			docs = append(docs, part)
		}
	}
	return docs
}

// manifestFiles lists every YAML file under the deploy directory.
func manifestFiles(root string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(path string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !e.IsDir() && (strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			files = append(files, path)
		}
		return nil
	})
	return files, err
}
