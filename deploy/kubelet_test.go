package deploy

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// fakePod is what the kubelet knows of one pod when it starts a container:
// the pod's name and namespace (for fieldRef) and the Secrets and
// ConfigMaps it may read, by name then key.
type fakePod struct {
	name, namespace string
	secrets         map[string]map[string]string
	configMaps      map[string]map[string]string
}

// kubeletEnv builds c's environment as the kubelet does: in order, each
// value with $(VAR) expanded against the variables before it, fieldRef
// metadata.name and metadata.namespace from the pod, secretKeyRef and
// configMapKeyRef from its Secrets and ConfigMaps. A reference that does
// not resolve is an error, as the kubelet's CreateContainerConfigError.
func kubeletEnv(c corev1.Container, pod fakePod) (map[string]string, error) {
	env := map[string]string{}
	for _, e := range c.Env {
		v, err := resolveEnv(e, pod, env)
		if err != nil {
			return nil, fmt.Errorf("env %s: %w", e.Name, err)
		}
		env[e.Name] = v
	}
	return env, nil
}

func resolveEnv(e corev1.EnvVar, pod fakePod, before map[string]string) (string, error) {
	src := e.ValueFrom
	switch {
	case src == nil:
		return expandVars(e.Value, before), nil
	case src.FieldRef != nil:
		switch src.FieldRef.FieldPath {
		case "metadata.name":
			return pod.name, nil
		case "metadata.namespace":
			return pod.namespace, nil
		}
		return "", fmt.Errorf("fieldRef %s: this test's kubelet knows metadata.name and metadata.namespace", src.FieldRef.FieldPath)
	case src.SecretKeyRef != nil:
		return lookupKey("Secret", pod.secrets, src.SecretKeyRef.Name, src.SecretKeyRef.Key)
	case src.ConfigMapKeyRef != nil:
		return lookupKey("ConfigMap", pod.configMaps, src.ConfigMapKeyRef.Name, src.ConfigMapKeyRef.Key)
	}
	return "", fmt.Errorf("valueFrom %s: not supported here", mustJSON(src))
}

func lookupKey(kind string, objs map[string]map[string]string, name, key string) (string, error) {
	data, ok := objs[name]
	if !ok {
		return "", fmt.Errorf("%s %q not found", kind, name)
	}
	v, ok := data[key]
	if !ok {
		return "", fmt.Errorf("%s %q has no key %q", kind, name, key)
	}
	return v, nil
}

// kubeletArgv is the process's argv: command then args, each with $(VAR)
// expanded against the container's environment.
func kubeletArgv(c corev1.Container, env map[string]string) []string {
	var argv []string
	for _, a := range append(append([]string{}, c.Command...), c.Args...) {
		argv = append(argv, expandVars(a, env))
	}
	return argv
}

// expandVars is Kubernetes' $(VAR) expansion (k8s.io/kubernetes
// third_party/forked/golang/expansion): $(NAME) becomes NAME's value when
// it is defined and stays as written when not, $$ is one $, and any other
// $ is itself.
func expandVars(in string, vars map[string]string) string {
	return expand(in, func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	})
}

// varRefs lists the $(NAME) references in s that expansion looks up.
func varRefs(s string) []string {
	var refs []string
	expand(s, func(name string) (string, bool) {
		refs = append(refs, name)
		return "", false
	})
	return refs
}

func expand(in string, lookup func(string) (string, bool)) string {
	var b strings.Builder
	for i := 0; i < len(in); i++ {
		if in[i] != '$' || i+1 == len(in) {
			b.WriteByte(in[i])
			continue
		}
		switch in[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(in[i+2:], ')')
			if end < 0 {
				b.WriteString("$(")
				i++
				continue
			}
			name := in[i+2 : i+2+end]
			if v, ok := lookup(name); ok {
				b.WriteString(v)
			} else {
				b.WriteString("$(" + name + ")")
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

// TestKubeletExpansion: the expansion the end-to-end test starts workers
// with is the kubelet's, unknown names and escapes included.
func TestKubeletExpansion(t *testing.T) {
	vars := map[string]string{"POD_NAME": "w-0", "EMPTY": ""}
	cases := []struct{ in, want string }{
		{"--name=$(POD_NAME)", "--name=w-0"},
		{"$(POD_NAME)$(POD_NAME)", "w-0w-0"},
		{"$$(POD_NAME)", "$(POD_NAME)"},
		{"$(UNSET)", "$(UNSET)"},
		{"x$(EMPTY)y", "xy"},
		{"$(POD_NAME", "$(POD_NAME"},
		{"a$b$", "a$b$"},
		{"$$$$", "$$"},
		{"", ""},
	}
	for _, c := range cases {
		if got := expandVars(c.in, vars); got != c.want {
			t.Errorf("expand(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := varRefs("--a=$(A) $$(B) $(C"); len(got) != 1 || got[0] != "A" {
		t.Errorf("varRefs = %v, want [A]", got)
	}
	c := corev1.Container{
		Command: []string{"/bin"},
		Args:    []string{"--n=$(N)", "--u=$(U)"},
		Env: []corev1.EnvVar{
			{Name: "N", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
			{Name: "U", Value: "$(N)-$(LATER)"},
			{Name: "LATER", Value: "l"},
		},
	}
	env, err := kubeletEnv(c, fakePod{name: "p"})
	if err != nil {
		t.Fatal(err)
	}
	if argv := strings.Join(kubeletArgv(c, env), " "); argv != "/bin --n=p --u=p-$(LATER)" {
		t.Errorf("argv %q: an env value sees only the variables before it", argv)
	}
	c.Env = append(c.Env, corev1.EnvVar{Name: "T", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: "s"}, Key: "k"}}})
	if _, err := kubeletEnv(c, fakePod{name: "p"}); err == nil || !strings.Contains(err.Error(), `Secret "s" not found`) {
		t.Errorf("a missing Secret: %v", err)
	}
	if _, err := kubeletEnv(c, fakePod{name: "p", secrets: map[string]map[string]string{"s": {}}}); err == nil || !strings.Contains(err.Error(), `no key "k"`) {
		t.Errorf("a missing key: %v", err)
	}
}
