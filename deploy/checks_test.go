package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/daemon"
	"github.com/netloadgen/netloadgen/pkg/runspec"
)

// nonrootUID is distroless's nonroot user, the Dockerfile's USER.
const nonrootUID = 65532

// typed is one build's objects decoded into their Go types.
type typed struct {
	deployments map[string]*appsv1.Deployment
	jobs        map[string]*batchv1.Job
	services    map[string]*corev1.Service
	configMaps  map[string]*corev1.ConfigMap
	monitors    map[string]*ServiceMonitor
	isvcs       map[string]*InferenceService
}

func typedBuild(t *testing.T, dir string) typed {
	t.Helper()
	tb := typed{map[string]*appsv1.Deployment{}, map[string]*batchv1.Job{}, map[string]*corev1.Service{}, map[string]*corev1.ConfigMap{},
		map[string]*ServiceMonitor{}, map[string]*InferenceService{}}
	d := newStrictDecoder()
	for _, o := range build(t, dir) {
		b, _ := json.Marshal(o)
		v, err := d.decode(b)
		if err != nil {
			t.Fatal(err)
		}
		switch v := v.(type) {
		case *appsv1.Deployment:
			tb.deployments[v.Name] = v
		case *batchv1.Job:
			tb.jobs[v.Name] = v
		case *corev1.Service:
			tb.services[v.Name] = v
		case *corev1.ConfigMap:
			tb.configMaps[v.Name] = v
		case *ServiceMonitor:
			tb.monitors[v.Name] = v
		case *InferenceService:
			tb.isvcs[v.Name] = v
		}
	}
	return tb
}

// podTemplates returns the pod template of every Deployment and Job of the
// build, by kind/name.
func (tb typed) podTemplates() map[string]corev1.PodTemplateSpec {
	m := map[string]corev1.PodTemplateSpec{}
	for _, d := range tb.deployments {
		m["Deployment/"+d.Name] = d.Spec.Template
	}
	for _, j := range tb.jobs {
		m["Job/"+j.Name] = j.Spec.Template
	}
	return m
}

// TestLoadgendDeployment checks, in every build that holds loadgend, what
// the daemon and the image need: the documented port and probes, a
// non-root read-only container, resources, a data volume, the token from a
// Secret, ConfigMap references that resolve, and an environment the daemon
// itself accepts.
func TestLoadgendDeployment(t *testing.T) {
	documented := documentedVariables(t)
	found := 0
	for _, dir := range kustomizations(t) {
		tb := typedBuild(t, dir)
		dep, ok := tb.deployments["loadgend"]
		if !ok {
			continue
		}
		found++
		t.Run(dir, func(t *testing.T) {
			pod := dep.Spec.Template.Spec
			if len(pod.Containers) != 1 {
				t.Fatalf("%d containers", len(pod.Containers))
			}
			c := pod.Containers[0]
			checkImage(t, c.Image)
			if len(c.Command) != 0 || len(c.Args) != 0 {
				t.Errorf("command %v args %v: loadgend is the image's entry point and takes no arguments", c.Command, c.Args)
			}
			if len(c.Ports) != 1 || c.Ports[0].ContainerPort != 8080 || c.Ports[0].Name != "http" {
				t.Errorf("ports %v, want http 8080 (the image's EXPOSE)", c.Ports)
			}
			for _, p := range []struct {
				name  string
				probe *corev1.Probe
				path  string
			}{{"liveness", c.LivenessProbe, "/healthz"}, {"readiness", c.ReadinessProbe, "/readyz"}, {"startup", c.StartupProbe, "/healthz"}} {
				if p.probe == nil || p.probe.HTTPGet == nil || p.probe.HTTPGet.Path != p.path || p.probe.HTTPGet.Port != intstr.FromString("http") {
					t.Errorf("%s probe %s, want GET %s on port http", p.name, mustJSON(p.probe), p.path)
				}
			}
			for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				req, lim := c.Resources.Requests[r], c.Resources.Limits[r]
				if req.IsZero() || lim.IsZero() || req.Cmp(lim) > 0 {
					t.Errorf("%s: request %v limit %v", r, req.String(), lim.String())
				}
			}
			checkSecurity(t, pod, c)
			env := podEnv(t, tb, c, documented)
			dataDir := env["LOADGEND_DATA_DIR"]
			mounted := false
			for _, m := range c.VolumeMounts {
				if m.MountPath == dataDir && !m.ReadOnly && hasVolume(pod, m.Name) {
					mounted = true
				}
			}
			if dataDir == "" || !mounted {
				t.Errorf("LOADGEND_DATA_DIR %q is not a writable volume mount (%v)", dataDir, c.VolumeMounts)
			}
			cfg := loadConfig(t, env)
			if err := cfg.Validate(); err != nil {
				t.Errorf("the daemon refuses this environment: %v", err)
			}
			if !strings.HasPrefix(cfg.Listen, "0.0.0.0:") || cfg.APIToken == "" {
				t.Errorf("listen %q token set %v: in a pod loadgend must listen on all interfaces, with a token", cfg.Listen, cfg.APIToken != "")
			}
			svc := tb.services["loadgend"]
			if svc == nil {
				t.Fatal("no loadgend Service")
			}
			checkService(t, svc, dep, c)
		})
	}
	if found == 0 {
		t.Fatal("no build holds the loadgend Deployment")
	}
}

func checkImage(t *testing.T, image string) {
	t.Helper()
	_, tag, ok := strings.Cut(image[strings.LastIndex(image, "/")+1:], ":")
	if !ok || tag == "" || tag == "latest" {
		t.Errorf("image %q: pin a tag (not latest)", image)
	}
}

func checkSecurity(t *testing.T, pod corev1.PodSpec, c corev1.Container) {
	t.Helper()
	psc, sc := pod.SecurityContext, c.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser != nonrootUID {
		t.Errorf("pod securityContext %s: want runAsNonRoot and runAsUser %d (the image's nonroot)", mustJSON(psc), nonrootUID)
	}
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.Privileged != nil && *sc.Privileged || sc.Capabilities == nil || len(sc.Capabilities.Drop) == 0 {
		t.Errorf("container securityContext %s: want a read-only root, no privilege escalation, capabilities dropped", mustJSON(sc))
	}
}

func hasVolume(pod corev1.PodSpec, name string) bool {
	for _, v := range pod.Volumes {
		if v.Name == name {
			return true
		}
	}
	return false
}

// podEnv resolves the container's environment as the kubelet would: plain
// values, ConfigMap keys from the same build, and a stand-in for Secret
// keys (the Secret is the operator's, never shipped). Every LOADGEND_*
// name must be one docs/daemon.md documents.
func podEnv(t *testing.T, tb typed, c corev1.Container, documented map[string]bool) map[string]string {
	t.Helper()
	env := map[string]string{}
	for _, e := range c.Env {
		if strings.HasPrefix(e.Name, "LOADGEND_") && !documented[e.Name] {
			t.Errorf("%s is not in docs/daemon.md's configuration table (%s)", e.Name, names(documented))
		}
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = e.Value
		case e.ValueFrom.ConfigMapKeyRef != nil:
			ref := e.ValueFrom.ConfigMapKeyRef
			cm, ok := tb.configMaps[ref.Name]
			v, has := "", false
			if ok {
				v, has = cm.Data[ref.Key]
			}
			if !has {
				t.Errorf("%s: ConfigMap %s key %s is not in the build", e.Name, ref.Name, ref.Key)
			}
			env[e.Name] = v
		case e.ValueFrom.SecretKeyRef != nil:
			ref := e.ValueFrom.SecretKeyRef
			if e.Name != "LOADGEND_API_TOKEN" || ref.Name != "loadgend-api-token" || ref.Key != "token" {
				t.Errorf("%s from Secret %s key %s: docs/deploy.md tells operators to create loadgend-api-token with key token for LOADGEND_API_TOKEN", e.Name, ref.Name, ref.Key)
			}
			env[e.Name] = "stand-in-token"
		default:
			t.Errorf("%s: unexpected valueFrom %s", e.Name, mustJSON(e.ValueFrom))
		}
	}
	if env["LOADGEND_API_TOKEN"] == "" {
		t.Error("LOADGEND_API_TOKEN is not set from a Secret")
	}
	return env
}

// loadConfig has the daemon read env as its own environment.
func loadConfig(t *testing.T, env map[string]string) daemon.Config {
	t.Helper()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "LOADGEND_") {
			t.Setenv(k, "") // restores it afterwards
			os.Unsetenv(k)
		}
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
	cfg, err := daemon.LoadConfig()
	if err != nil {
		t.Fatalf("daemon.LoadConfig: %v", err)
	}
	return cfg
}

func checkService(t *testing.T, svc *corev1.Service, dep *appsv1.Deployment, c corev1.Container) {
	t.Helper()
	if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(dep.Spec.Template.Labels)) || len(svc.Spec.Selector) == 0 {
		t.Errorf("Service %s selector %v does not select the pods %v", svc.Name, svc.Spec.Selector, dep.Spec.Template.Labels)
	}
	for _, p := range svc.Spec.Ports {
		ok := false
		for _, cp := range c.Ports {
			if p.TargetPort.StrVal == cp.Name || p.TargetPort.IntValue() == int(cp.ContainerPort) {
				ok = true
			}
		}
		if !ok {
			t.Errorf("Service %s port %s targets %s, not a container port", svc.Name, p.Name, p.TargetPort.String())
		}
	}
}

// TestScraping checks that each overlay's way of being scraped reaches
// loadgend's /metrics: the ServiceMonitor selects the Service and names
// one of its ports; the annotations name the container's port.
func TestScraping(t *testing.T) {
	kinds := map[string]bool{}
	for _, dir := range kustomizations(t) {
		tb := typedBuild(t, dir)
		for _, sm := range tb.monitors {
			kinds["ServiceMonitor"] = true
			sel, err := metav1LabelSelector(sm)
			if err != nil {
				t.Fatalf("%s: %v", dir, err)
			}
			matched := 0
			for _, svc := range tb.services {
				if svc.Namespace == sm.Namespace && sel.Matches(labels.Set(svc.Labels)) {
					matched++
					for _, ep := range sm.Spec.Endpoints {
						if !servicePort(svc, ep.Port) || ep.Path != "/metrics" {
							t.Errorf("%s: ServiceMonitor %s endpoint %s %s: not the Service's /metrics port", dir, sm.Name, ep.Port, ep.Path)
						}
					}
				}
			}
			if matched != 1 {
				t.Errorf("%s: ServiceMonitor %s selects %d Services, want loadgend's", dir, sm.Name, matched)
			}
		}
		for name, tpl := range tb.podTemplates() {
			a := tpl.Annotations
			if a["prometheus.io/scrape"] == "" {
				continue
			}
			kinds["annotations"] = true
			port, err := strconv.Atoi(a["prometheus.io/port"])
			if a["prometheus.io/scrape"] != "true" || err != nil || a["prometheus.io/path"] != "/metrics" {
				t.Errorf("%s: %s annotations %v", dir, name, a)
			}
			if !containerPort(tpl.Spec, int32(port)) {
				t.Errorf("%s: %s: prometheus.io/port %d is not a container port", dir, name, port)
			}
		}
	}
	if !kinds["ServiceMonitor"] || !kinds["annotations"] {
		t.Errorf("scrape variants found: %v, want both", kinds)
	}
}

func metav1LabelSelector(sm *ServiceMonitor) (labels.Selector, error) {
	if len(sm.Spec.Selector.MatchExpressions) > 0 || len(sm.Spec.Selector.MatchLabels) == 0 {
		return nil, fmt.Errorf("ServiceMonitor %s: want matchLabels only", sm.Name)
	}
	return labels.SelectorFromSet(sm.Spec.Selector.MatchLabels), nil
}

func servicePort(svc *corev1.Service, name string) bool {
	for _, p := range svc.Spec.Ports {
		if p.Name == name {
			return true
		}
	}
	return false
}

func containerPort(pod corev1.PodSpec, port int32) bool {
	for _, c := range pod.Containers {
		for _, p := range c.Ports {
			if p.ContainerPort == port {
				return true
			}
		}
	}
	return false
}

// TestRunSpecs decodes each example run spec with the daemon's own strict
// decoder and limits, and checks that its target is a Service (or KServe
// predictor) of the build it goes with and that loadgend's allowlist there
// lets it through.
func TestRunSpecs(t *testing.T) {
	cases := []struct {
		spec, build, loadgend string // loadgend: the build with loadgend's allowlist
	}{
		{"sutproxy/runspec.json", "overlays/demo", "overlays/demo"},
		{"kserve/runspec.json", "kserve", "overlays/prometheus-operator"},
	}
	specs, _ := filepath.Glob("*/runspec.json")
	if len(specs) != len(cases) {
		t.Errorf("run specs %v, want the %d below", specs, len(cases))
	}
	for _, c := range cases {
		t.Run(c.spec, func(t *testing.T) {
			f, err := os.Open(c.spec)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			lg := typedBuild(t, c.loadgend)
			cfg := loadConfig(t, podEnv(t, lg, lg.deployments["loadgend"].Spec.Template.Spec.Containers[0], documentedVariables(t)))
			spec, err := runspec.Decode(f, api.Limits{MaxQPS: cfg.MaxQPS, MaxDuration: cfg.MaxDuration, MaxInflight: cfg.MaxInflight})
			if err != nil {
				t.Fatalf("the daemon refuses it: %v", err)
			}
			u, err := url.Parse(spec.Target)
			if err != nil {
				t.Fatal(err)
			}
			allow, err := daemon.NewAllowlist(cfg.AllowedTargets)
			if err != nil {
				t.Fatal(err)
			}
			if !allow.Allows(context.Background(), u.Hostname()) {
				t.Errorf("target host %s is outside the allowlist %v of %s", u.Hostname(), cfg.AllowedTargets, c.loadgend)
			}
			if hosts := serviceHosts(typedBuild(t, c.build)); !hosts[u.Host] {
				t.Errorf("target %s is none of %s's endpoints: %s", u.Host, c.build, names(hosts))
			}
		})
	}
}

// serviceHosts lists the in-cluster host:port of every Service port and of
// every InferenceService's predictor (KServe's RawDeployment Service
// <name>-predictor on port 80).
func serviceHosts(tb typed) map[string]bool {
	h := map[string]bool{}
	for _, s := range tb.services {
		for _, p := range s.Spec.Ports {
			h[fmt.Sprintf("%s.%s.svc.cluster.local:%d", s.Name, s.Namespace, p.Port)] = true
		}
	}
	for _, is := range tb.isvcs {
		if is.Annotations["serving.kserve.io/deploymentMode"] == "RawDeployment" {
			h[fmt.Sprintf("%s-predictor.%s.svc.cluster.local:80", is.Name, is.Namespace)] = true
		}
	}
	return h
}

// TestSameImage: sutproxy runs from loadgend's image, so both must name
// the same one.
func TestSameImage(t *testing.T) {
	tb := typedBuild(t, "overlays/demo")
	l, s := tb.deployments["loadgend"], tb.deployments["sutproxy"]
	if l == nil || s == nil {
		t.Fatal("the demo overlay lacks loadgend or sutproxy")
	}
	li, si := l.Spec.Template.Spec.Containers[0].Image, s.Spec.Template.Spec.Containers[0].Image
	if li != si {
		t.Errorf("loadgend image %s, sutproxy image %s", li, si)
	}
	checkImage(t, si)
	checkSecurity(t, s.Spec.Template.Spec, s.Spec.Template.Spec.Containers[0])
}

// documentedVariables reads the LOADGEND_* names of the daemon's configuration
// table (docs/daemon.md, "Configuration").
func documentedVariables(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", "daemon.md"))
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `(LOADGEND_[A-Z_]+)` \\|").FindAllStringSubmatch(string(b), -1) {
		vars[m[1]] = true
	}
	if len(vars) < 5 {
		t.Fatalf("found only %v in docs/daemon.md's configuration table", vars)
	}
	return vars
}

// TestDocsCreateTheSecret: the Secret the Deployment reads is one the
// Kubernetes page (docs/deploy.md) tells operators to create, with the same
// name and key.
func TestDocsCreateTheSecret(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "deploy.md"))
	if err != nil {
		t.Fatal(err)
	}
	tb := typedBuild(t, "base")
	for _, e := range tb.deployments["loadgend"].Spec.Template.Spec.Containers[0].Env {
		if ref := e.ValueFrom; ref != nil && ref.SecretKeyRef != nil {
			want := fmt.Sprintf("create secret generic %s --from-literal=%s=", ref.SecretKeyRef.Name, ref.SecretKeyRef.Key)
			if !strings.Contains(string(b), want) {
				t.Errorf("docs/deploy.md does not show `kubectl ... %s...` for %s", want, e.Name)
			}
		}
	}
}
