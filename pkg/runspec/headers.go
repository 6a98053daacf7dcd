package runspec

import (
	"crypto/tls"
	"os"
	"slices"
	"strings"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/pkg/runner"
	"github.com/netloadgen/netloadgen/pkg/secret"
)

// daemonSecrets are where the daemon's specs may read references from:
// its environment, only the variables LOADGEND_SECRET_ENV names (none when
// it is empty: a caller must not read the daemon's environment), and files
// only under LOADGEND_SECRETS_DIR (none when it is not set).
func daemonSecrets(lim api.Limits) (secret.Sources, bool) {
	allowed := append([]string{}, lim.SecretEnv...) // not nil: nil would allow any
	return secret.Sources{Env: os.LookupEnv, AllowedEnv: allowed, FilesDir: lim.SecretsDir}, lim.SecretsDir == ""
}

// DaemonEnv is what a spec may read on this host under lim, as the daemon
// builds its runs (Admit): sample files under LOADGEND_DATA_ROOT,
// references under LOADGEND_SECRET_ENV and LOADGEND_SECRETS_DIR. A worker
// builds its coordinator's specs with its own.
func DaemonEnv(lim api.Limits) Env {
	secrets, noFiles := daemonSecrets(lim)
	return Env{DataRoot: lim.DataRoot, Secrets: secrets, NoSecretFiles: noFiles}
}

// ProbeHeaders are a probe request's headers (api.ProbeRequest.Headers)
// resolved as a daemon's run spec's are, under lim's LOADGEND_SECRET_ENV
// and LOADGEND_SECRETS_DIR. Errors are *api.FieldError naming headers.
func ProbeHeaders(hs map[string]string, lim api.Limits) ([]runner.Header, error) {
	secrets, noFiles := daemonSecrets(lim)
	return resolveHeaders(hs, Env{Secrets: secrets, NoSecretFiles: noFiles})
}

// ProbeTLS is the daemon's probe's TLS configuration, built as a run's
// (nil for a plain-text target).
func ProbeTLS(p api.ProbeRequest, lim api.Limits) (*tls.Config, error) {
	secrets, noFiles := daemonSecrets(lim)
	return buildTLS(api.RunSpec{Target: p.Target, TLS: p.TLS}, Env{Secrets: secrets, NoSecretFiles: noFiles})
}

// resolveHeaders reads the spec's header values (references resolved from
// env.Secrets) into the run's headers, sorted by name, each with how it is
// shown. Errors name the field and the header, never a value.
func resolveHeaders(hs map[string]string, env Env) ([]runner.Header, error) {
	if len(hs) == 0 {
		return nil, nil
	}
	out := make([]runner.Header, 0, len(hs))
	for name, v := range hs {
		if strings.HasPrefix(v, secret.FilePrefix) && env.NoSecretFiles {
			return nil, fieldErr("headers", "%s: %s: file references are off: the daemon reads them only under LOADGEND_SECRETS_DIR, which is not set", name, v)
		}
		val, err := secret.Resolve(v, env.Secrets)
		if err != nil {
			return nil, fieldErr("headers", "%s: %v", name, err)
		}
		if err := kserve.CheckHeaderValue(val); err != nil {
			return nil, fieldErr("headers", "%s: %s: %v", name, v, err)
		}
		out = append(out, runner.Header{Name: name, Value: val, Shown: secret.Shown(v)})
	}
	slices.SortFunc(out, func(a, b runner.Header) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}
