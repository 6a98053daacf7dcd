package deploy

import (
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/daemon"
)

// The workers' objects and the label that finds their pods
// (kubectl get pods -l app.kubernetes.io/name=loadgend-worker).
const (
	workerDeployment = "loadgend-worker"
	workerJob        = "loadgend-worker-once"
	workerNameLabel  = "app.kubernetes.io/name"
	workerNameValue  = "loadgend-worker"
)

// RenderedWorker resolves the kustomization dir, decodes it strictly and
// returns the worker container of its kind ("Deployment": the standing
// workers, "Job": the one-off ones) as the build renders it: its image,
// command, args, env (references unresolved, as in the manifest) and
// probes. The end-to-end test starts workers from exactly this.
func RenderedWorker(dir, kind string) (corev1.Container, error) {
	name := map[string]string{"Deployment": workerDeployment, "Job": workerJob}[kind]
	if name == "" {
		return corev1.Container{}, fmt.Errorf("worker kind %q: want Deployment or Job", kind)
	}
	pod, err := renderedPod(dir, kind, name)
	if err != nil {
		return corev1.Container{}, err
	}
	return pod.Containers[0], nil
}

// renderedPod is the pod spec of the Deployment or Job name in dir's
// build, which must have one container.
func renderedPod(dir, kind, name string) (corev1.PodSpec, error) {
	objs, err := kustomizeBuild(dir)
	if err != nil {
		return corev1.PodSpec{}, err
	}
	d := newStrictDecoder()
	for _, o := range objs {
		if o.str("kind") != kind || o.str("metadata", "name") != name {
			continue
		}
		b, err := json.Marshal(o)
		if err != nil {
			return corev1.PodSpec{}, err
		}
		v, err := d.decode(b)
		if err != nil {
			return corev1.PodSpec{}, fmt.Errorf("%s: %s: %w", dir, o.key(), err)
		}
		var pod corev1.PodSpec
		switch v := v.(type) {
		case *appsv1.Deployment:
			pod = v.Spec.Template.Spec
		case *batchv1.Job:
			pod = v.Spec.Template.Spec
		default:
			return corev1.PodSpec{}, fmt.Errorf("%s: %s is a %T", dir, o.key(), v)
		}
		if len(pod.Containers) != 1 {
			return corev1.PodSpec{}, fmt.Errorf("%s: %s has %d containers, want one", dir, o.key(), len(pod.Containers))
		}
		return pod, nil
	}
	return corev1.PodSpec{}, fmt.Errorf("%s: no %s %s in the build", dir, kind, name)
}

// workerBuild is one build holding workers, with what they are checked
// against: the coordinator's container and Service (of the build, or the
// base's when the build holds the workers alone).
type workerBuild struct {
	dir         string
	kind        string
	name        string
	tpl         corev1.PodTemplateSpec
	coordinator corev1.Container
	coordPod    corev1.PodTemplateSpec
	service     *corev1.Service
}

func workerBuilds(t *testing.T) []workerBuild {
	t.Helper()
	base := typedBuild(t, "base")
	var out []workerBuild
	for _, dir := range kustomizations(t) {
		tb := typedBuild(t, dir)
		coord := tb
		if tb.deployments["loadgend"] == nil {
			coord = base
		}
		wb := workerBuild{dir: dir, coordinator: coord.deployments["loadgend"].Spec.Template.Spec.Containers[0],
			coordPod: coord.deployments["loadgend"].Spec.Template, service: coord.services["loadgend"]}
		if d := tb.deployments[workerDeployment]; d != nil {
			wb.kind, wb.name, wb.tpl = "Deployment", d.Name, d.Spec.Template
			out = append(out, wb)
		}
		if j := tb.jobs[workerJob]; j != nil {
			wb.kind, wb.name, wb.tpl = "Job", j.Name, j.Spec.Template
			out = append(out, wb)
		}
	}
	return out
}

// TestWorkerManifests checks every build's workers, Deployment and Job:
// the command the worker subcommand takes, the coordinator URL naming the
// loadgend Service's real name and port, the token from the coordinator's
// own Secret and key, the coordinator's image and securityContext, probes
// on the port LOADGEND_LISTEN opens, preferred anti-affinity one worker a
// node, and labels that tell workers from the coordinator.
func TestWorkerManifests(t *testing.T) {
	builds := workerBuilds(t)
	seen := map[string]bool{}
	for _, wb := range builds {
		seen[wb.dir+" "+wb.kind] = true
		t.Run(wb.dir+"/"+wb.kind, func(t *testing.T) {
			c, err := RenderedWorker(wb.dir, wb.kind)
			if err != nil {
				t.Fatal(err)
			}
			checkWorkerCommand(t, wb, c)
			checkWorkerEnv(t, wb, c)
			checkWorkerProbes(t, c)
			checkWorkerPod(t, wb)
		})
	}
	for _, want := range []string{"workers Deployment", "workers-job Job", "overlays/distributed Deployment", "overlays/distributed-job Job"} {
		if !seen[want] {
			t.Errorf("no worker %s; builds with workers: %v", want, seen)
		}
	}
}

func checkWorkerCommand(t *testing.T, wb workerBuild, c corev1.Container) {
	t.Helper()
	if c.Image != wb.coordinator.Image {
		t.Errorf("image %s, the coordinator's %s: a worker of another version is refused", c.Image, wb.coordinator.Image)
	}
	checkImage(t, c.Image)
	if !slices.Equal(c.Command, []string{"/loadgend"}) {
		t.Errorf("command %v, want [/loadgend] (the Dockerfile's binary)", c.Command)
	}
	if len(c.Args) == 0 || c.Args[0] != "worker" {
		t.Fatalf("args %v: want the worker subcommand first", c.Args)
	}
	flags := workerFlags(t, c.Args[1:])
	coord, err := url.Parse(flags["--coordinator"])
	if err != nil || coord.Scheme != "http" || coord.Path != "" {
		t.Fatalf("--coordinator %q: want http://SERVICE:PORT (%v)", flags["--coordinator"], err)
	}
	if wb.service == nil {
		t.Fatal("no loadgend Service to reach")
	}
	if want := serviceAddr(wb.service, "http"); coord.Host != want {
		t.Errorf("--coordinator %s: the coordinator's Service is %s", coord, want)
	}
	if err := coordinatorAdmits(wb.coordinator.Env, coord.Hostname()); err != nil {
		t.Error(err)
	}
	_, once := flags["--once"]
	if once != (wb.kind == "Job") {
		t.Errorf("%s with --once %v: a Job's workers take one run and exit, a Deployment's stay", wb.kind, once)
	}
	if flags["--name"] != "$(POD_NAME)" {
		t.Errorf("--name %q: want $(POD_NAME), the pod's name, unique among live workers", flags["--name"])
	}
	for _, a := range c.Args {
		for _, ref := range varRefs(a) {
			if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == ref }) {
				t.Errorf("arg %q refers to $(%s), not in the container's env: the kubelet would pass it literally", a, ref)
			}
		}
	}
}

// coordinatorAdmits: the coordinator takes requests whose Host is the name
// workers reach it by. Without LOADGEND_ALLOWED_HOSTS it takes any Host
// (listening beyond loopback it cannot know its names); with it, only the
// names listed (the daemon's host guard: names compared, never resolved).
func coordinatorAdmits(env []corev1.EnvVar, host string) error {
	for _, e := range env {
		if e.Name != "LOADGEND_ALLOWED_HOSTS" {
			continue
		}
		if e.ValueFrom != nil {
			return fmt.Errorf("LOADGEND_ALLOWED_HOSTS from %s: set it as a value, so this check can read it", mustJSON(e.ValueFrom))
		}
		var list []string
		for _, h := range strings.Split(e.Value, ",") {
			if h = strings.TrimSpace(h); h != "" {
				list = append(list, h)
			}
		}
		a, err := daemon.NewAllowlist(list)
		if err != nil {
			return fmt.Errorf("LOADGEND_ALLOWED_HOSTS %q: %w", e.Value, err)
		}
		if !a.Lists(host) {
			return fmt.Errorf("LOADGEND_ALLOWED_HOSTS %q does not list %s, the name workers reach the coordinator by: their requests would be 403 host_not_allowed", e.Value, host)
		}
	}
	return nil
}

func TestCoordinatorAdmits(t *testing.T) {
	hosts := func(v string) []corev1.EnvVar { return []corev1.EnvVar{{Name: "LOADGEND_ALLOWED_HOSTS", Value: v}} }
	for _, c := range []struct {
		env []corev1.EnvVar
		ok  bool
	}{
		{nil, true},
		{hosts("loadgend, loadgend.netloadgen.svc"), true},
		{hosts("*.svc.cluster.local"), false},
		{hosts("proxy.example.com"), false},
	} {
		if err := coordinatorAdmits(c.env, "loadgend"); (err == nil) != c.ok {
			t.Errorf("%s: %v, want admitted %v", mustJSON(c.env), err, c.ok)
		}
	}
}

// workerFlags reads --flag=value and bare --flag arguments; anything else
// (a flag and its value as two arguments) is refused, so the test reads
// the flags as the worker does.
func workerFlags(t *testing.T, args []string) map[string]string {
	t.Helper()
	flags := map[string]string{}
	for _, a := range args {
		if !strings.HasPrefix(a, "--") {
			t.Errorf("argument %q: write flags as --flag=value", a)
			continue
		}
		k, v, _ := strings.Cut(a, "=")
		if _, dup := flags[k]; dup {
			t.Errorf("%s twice", k)
		}
		flags[k] = v
	}
	return flags
}

// serviceAddr is the in-namespace host:port of svc's port named port.
func serviceAddr(svc *corev1.Service, port string) string {
	for _, p := range svc.Spec.Ports {
		if p.Name == port {
			return svc.Name + ":" + strconv.Itoa(int(p.Port))
		}
	}
	return svc.Name + ": no port " + port
}

func checkWorkerEnv(t *testing.T, wb workerBuild, c corev1.Container) {
	t.Helper()
	documented := documentedVariables(t)
	var coordToken, token *corev1.SecretKeySelector
	for _, e := range wb.coordinator.Env {
		if e.Name == "LOADGEND_API_TOKEN" && e.ValueFrom != nil {
			coordToken = e.ValueFrom.SecretKeyRef
		}
	}
	for _, e := range c.Env {
		if strings.HasPrefix(e.Name, "LOADGEND_") && !documented[e.Name] {
			t.Errorf("%s is not in docs/daemon.md's configuration table", e.Name)
		}
		if e.Name == "LOADGEND_API_TOKEN" {
			if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
				t.Errorf("LOADGEND_API_TOKEN %s: want it from the coordinator's Secret, never a literal", mustJSON(e))
				continue
			}
			token = e.ValueFrom.SecretKeyRef
		}
	}
	if token == nil || coordToken == nil || token.Name != coordToken.Name || token.Key != coordToken.Key {
		t.Errorf("token from %s, the coordinator's from %s: want the same Secret and key", mustJSON(token), mustJSON(coordToken))
	}
	env, err := kubeletEnv(c, fakePod{name: "loadgend-worker-0", secrets: map[string]map[string]string{"loadgend-api-token": {"token": "t"}}})
	if err != nil {
		t.Fatal(err)
	}
	_, port, err := splitListen(env["LOADGEND_LISTEN"])
	if err != nil || !strings.HasPrefix(env["LOADGEND_LISTEN"], "0.0.0.0:") {
		t.Fatalf("LOADGEND_LISTEN %q: want 0.0.0.0:PORT, the worker's /metrics and /healthz reachable by the kubelet and Prometheus (%v)", env["LOADGEND_LISTEN"], err)
	}
	if !slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool { return p.Name == "http" && int(p.ContainerPort) == port }) {
		t.Errorf("ports %s: want http on LOADGEND_LISTEN's port %d", mustJSON(c.Ports), port)
	}
}

func splitListen(addr string) (string, int, error) {
	i := strings.LastIndex(addr, ":")
	if i < 0 {
		return "", 0, fmt.Errorf("no port in %q", addr)
	}
	p, err := strconv.Atoi(addr[i+1:])
	if err != nil || p <= 0 || p > 65535 {
		return "", 0, fmt.Errorf("port of %q: %v", addr, err)
	}
	return addr[:i], p, nil
}

// checkWorkerProbes: the three probes the coordinator has, on the worker's
// /healthz (it serves that and /metrics, no /readyz: nothing routes to it),
// and resources.
func checkWorkerProbes(t *testing.T, c corev1.Container) {
	t.Helper()
	for _, p := range []struct {
		name  string
		probe *corev1.Probe
		path  string
	}{{"liveness", c.LivenessProbe, "/healthz"}, {"readiness", c.ReadinessProbe, "/healthz"}, {"startup", c.StartupProbe, "/healthz"}} {
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
}

func checkWorkerPod(t *testing.T, wb workerBuild) {
	t.Helper()
	pod := wb.tpl.Spec
	checkSecurity(t, pod, pod.Containers[0])
	if !reflect.DeepEqual(pod.SecurityContext, wb.coordPod.Spec.SecurityContext) ||
		!reflect.DeepEqual(pod.Containers[0].SecurityContext, wb.coordinator.SecurityContext) {
		t.Errorf("securityContext differs from the coordinator's: pod %s container %s", mustJSON(pod.SecurityContext), mustJSON(pod.Containers[0].SecurityContext))
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Error("automountServiceAccountToken: want false, a worker needs no Kubernetes API")
	}
	for _, m := range pod.Containers[0].VolumeMounts {
		if !hasVolume(pod, m.Name) {
			t.Errorf("volume mount %s has no volume", m.Name)
		}
	}
	pl := labels.Set(wb.tpl.Labels)
	if pl[workerNameLabel] != workerNameValue {
		t.Errorf("pod labels %v: want %s=%s, which kubectl get pods -l finds", pl, workerNameLabel, workerNameValue)
	}
	if labels.SelectorFromSet(wb.service.Spec.Selector).Matches(pl) {
		t.Errorf("the coordinator's Service selector %v takes worker pods %v: API calls would reach workers", wb.service.Spec.Selector, pl)
	}
	if labels.SelectorFromSet(labels.Set{workerNameLabel: workerNameValue}).Matches(labels.Set(wb.coordPod.Labels)) {
		t.Errorf("the coordinator's pods %v carry the workers' label", wb.coordPod.Labels)
	}
	checkAntiAffinity(t, pod.Affinity, pl)
	switch wb.kind {
	case "Deployment":
		if pod.RestartPolicy != "" && pod.RestartPolicy != corev1.RestartPolicyAlways {
			t.Errorf("restartPolicy %s", pod.RestartPolicy)
		}
	case "Job":
		if pod.RestartPolicy != corev1.RestartPolicyNever {
			t.Errorf("restartPolicy %q: want Never, a worker that exited has taken its run", pod.RestartPolicy)
		}
	}
	// A Deployment's pod is NAME-HASH(≤10)-XXXXX, a Job's NAME-XXXXX; the
	// worker registers under it, so the longest must be a worker name the
	// coordinator takes.
	longest := map[string]string{"Deployment": wb.name + "-6f9d8c7b5d-x2k4p", "Job": wb.name + "-x2k4p"}[wb.kind]
	if err := api.CheckWorkerName(longest); err != nil {
		t.Errorf("%s %s: a pod name such as %s is no worker name: %v", wb.kind, wb.name, longest, err)
	}
}

// checkAntiAffinity wants a preferred (never required: a small cluster
// must still run every worker) pod anti-affinity on kubernetes.io/hostname
// whose selector takes every worker, Deployment's and Job's alike.
func checkAntiAffinity(t *testing.T, a *corev1.Affinity, podLabels labels.Set) {
	t.Helper()
	if a == nil || a.PodAntiAffinity == nil {
		t.Error("no pod anti-affinity: workers should spread one a node")
		return
	}
	pa := a.PodAntiAffinity
	if len(pa.RequiredDuringSchedulingIgnoredDuringExecution) > 0 {
		t.Error("required anti-affinity: a cluster with fewer nodes than workers would leave workers pending; prefer")
	}
	ok := false
	for _, w := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
		term := w.PodAffinityTerm
		sel, err := metav1.LabelSelectorAsSelector(term.LabelSelector)
		if err != nil {
			t.Error(err)
			continue
		}
		if term.TopologyKey == "kubernetes.io/hostname" && w.Weight > 0 && sel.Matches(podLabels) &&
			sel.Matches(labels.Set{workerNameLabel: workerNameValue}) {
			ok = true
		}
	}
	if !ok {
		t.Errorf("preferred anti-affinity %s: want a term on kubernetes.io/hostname selecting %s=%s", mustJSON(pa.PreferredDuringSchedulingIgnoredDuringExecution), workerNameLabel, workerNameValue)
	}
}

// TestWorkerDeploymentAndJob: the Deployment's selector takes its own
// pods and neither the Job's nor the coordinator's (overlapping
// controllers fight over pods); the Job runs as many workers at once as it
// completes (a distributed run takes them all at once), as many as the
// Deployment's replicas by default, and is bounded.
func TestWorkerDeploymentAndJob(t *testing.T) {
	dep := typedBuild(t, "overlays/distributed")
	job := typedBuild(t, "overlays/distributed-job")
	d, j := dep.deployments[workerDeployment], job.jobs[workerJob]
	if d == nil || j == nil {
		t.Fatal("overlays/distributed lacks the worker Deployment or overlays/distributed-job the Job")
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		t.Fatal(err)
	}
	if !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Errorf("selector %v does not take its own pods %v", d.Spec.Selector, d.Spec.Template.Labels)
	}
	for name, l := range map[string]map[string]string{"the Job's": j.Spec.Template.Labels, "the coordinator's": dep.deployments["loadgend"].Spec.Template.Labels} {
		if sel.Matches(labels.Set(l)) {
			t.Errorf("the worker Deployment's selector %v takes %s pods %v", d.Spec.Selector, name, l)
		}
	}
	if d.Spec.Replicas == nil || *d.Spec.Replicas < 2 {
		t.Errorf("replicas %v: a distributed run wants at least 2 workers", d.Spec.Replicas)
	}
	s := j.Spec
	if s.Parallelism == nil || s.Completions == nil || *s.Parallelism != *s.Completions || d.Spec.Replicas == nil || *s.Completions != *d.Spec.Replicas {
		t.Errorf("parallelism %v completions %v replicas %v: want all three the same worker count", s.Parallelism, s.Completions, d.Spec.Replicas)
	}
	if s.BackoffLimit == nil || *s.BackoffLimit < 0 || s.ActiveDeadlineSeconds == nil || *s.ActiveDeadlineSeconds <= 0 {
		t.Errorf("backoffLimit %v activeDeadlineSeconds %v: want both set, a Job waiting for a run that never comes must end", s.BackoffLimit, s.ActiveDeadlineSeconds)
	}
	if s.Selector != nil || s.ManualSelector != nil {
		t.Error("a Job's selector is the one Kubernetes generates")
	}
}

// TestWorkerJobMatchesDeployment: the Job's pod is the Deployment's but for
// --once, the restart policy and its instance label, so a fix to one
// cannot miss the other.
func TestWorkerJobMatchesDeployment(t *testing.T) {
	d := typedBuild(t, "workers").deployments[workerDeployment]
	j := typedBuild(t, "workers-job").jobs[workerJob]
	if d == nil || j == nil {
		t.Fatal("deploy/workers lacks the Deployment or deploy/workers-job the Job")
	}
	jt := j.Spec.Template.DeepCopy()
	jt.Spec.RestartPolicy = d.Spec.Template.Spec.RestartPolicy
	jt.Spec.Containers[0].Args = slices.DeleteFunc(jt.Spec.Containers[0].Args, func(a string) bool { return a == "--once" })
	jt.Labels["app.kubernetes.io/instance"] = d.Spec.Template.Labels["app.kubernetes.io/instance"]
	if !reflect.DeepEqual(jt, &d.Spec.Template) {
		a, _ := json.MarshalIndent(jt, "", " ")
		b, _ := json.MarshalIndent(d.Spec.Template, "", " ")
		t.Errorf("the Job's pod, less --once and its restart policy, differs from the Deployment's:\njob: %s\ndeployment: %s", a, b)
	}
}
