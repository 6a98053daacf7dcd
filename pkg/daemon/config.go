// Package daemon is loadgend's service: the control API over the runner, one
// run at a time with a FIFO queue, the run store, live metrics, security and
// graceful shutdown. cmd/loadgend only reads the configuration and starts it.
package daemon

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/kelseyhightower/envconfig"

	"github.com/netloadgen/netloadgen/api"
)

// Config is the daemon's configuration, read from LOADGEND_* variables.
type Config struct {
	// Listen is the control API's address.
	Listen string `envconfig:"LISTEN" default:"127.0.0.1:8080" desc:"the control API's address"`
	// DataDir holds the run history, one directory per run.
	DataDir string `envconfig:"DATA_DIR" default:"./loadgend-data" desc:"the run history, one directory per run"`
	// DataRoot is the directory run specs may name sample files under;
	// empty refuses sample files (the API can be reached from the network).
	DataRoot string `envconfig:"DATA_ROOT" desc:"the directory run specs may name sample files under (empty: no sample files)"`
	// SecretEnv names the environment variables a run spec's @env:
	// references may read (its headers); none when empty, so that a
	// caller cannot read the daemon's environment.
	SecretEnv []string `envconfig:"SECRET_ENV" desc:"environment variables a run spec's @env: header values may read, comma-separated (empty: none)"`
	// SecretsDir is the directory a run spec's @file: references may read
	// under (header values, the TLS client certificate and key); empty
	// refuses them. Its files are read at run start into memory only.
	SecretsDir string `envconfig:"SECRETS_DIR" desc:"the directory a run spec's @file: references (header values, tls.client_cert, tls.client_key) may read under (empty: refused)"`
	// APIToken, when set, is required as a bearer token on /v1/*.
	APIToken string `envconfig:"API_TOKEN" desc:"required as a bearer token on /v1/* when set"`
	// AllowedTargets lists the host names (exact, or *.suffix) and CIDRs a
	// run or probe may target; empty allows any target.
	AllowedTargets []string `envconfig:"ALLOWED_TARGETS" desc:"host names (exact or *.suffix) and CIDRs a run may target, comma-separated (empty: any)"`
	// AllowedHosts lists the host names (exact, or *.suffix), IPs and CIDRs
	// a request's Host header and Origin may name, at any port, besides
	// the loopback names at the listen port; see hostGuard.
	AllowedHosts []string `envconfig:"ALLOWED_HOSTS" desc:"host names, IPs and CIDRs a request's Host and Origin may name, besides loopback"`
	// MaxQueued caps the runs waiting behind the active one; past it a new
	// run is refused with 429. 0 in a Config built in Go is the default.
	MaxQueued int `envconfig:"MAX_QUEUED" default:"100" desc:"runs waiting behind the active one; more get 429"`
	// MaxQPS caps a run's target rate.
	MaxQPS float64 `envconfig:"MAX_QPS" default:"100000" desc:"cap on a run's target rate"`
	// MaxDuration caps a run's duration settings.
	MaxDuration time.Duration `envconfig:"MAX_DURATION" default:"1h" desc:"cap on a run's duration settings"`
	// MaxInflight caps a run's outstanding requests (Offline's max_inflight)
	// and connection pool.
	MaxInflight int `envconfig:"MAX_INFLIGHT" default:"4096" desc:"cap on a run's outstanding requests and connections"`
	// MaxTraceSamples caps the samples of a run's trace (queries × samples
	// per query), held in memory with the run's records of it, about 120
	// bytes a sample at most; 0 takes api.DefaultMaxTraceSamples.
	MaxTraceSamples uint64 `envconfig:"MAX_TRACE_SAMPLES" default:"100000000" desc:"cap on the samples of a run's trace"`
	// LogLevel is debug, info, warn or error.
	LogLevel string `envconfig:"LOG_LEVEL" default:"info" desc:"debug, info, warn or error"`
	// Insecure allows a non-loopback listen address without a token.
	Insecure bool `envconfig:"INSECURE" default:"false" desc:"allow a non-loopback listen address without a token"`
	// DrainTimeout bounds the wait for in-flight requests at cancel and at
	// shutdown.
	DrainTimeout time.Duration `envconfig:"DRAIN_TIMEOUT" default:"10s" desc:"wait for in-flight requests at cancel and shutdown"`
	// APIConcurrency caps the /v1 requests served at once (event streams
	// aside); more wait briefly, then get 503. 0: DefaultAPIConcurrency.
	APIConcurrency int `envconfig:"API_CONCURRENCY" default:"2" desc:"/v1 requests served at once; more wait, then get 503"`
	// BodyTimeout bounds the read of a request's body, which comes before
	// the request takes one of those slots: a body slower than this gets
	// 408. 0: DefaultBodyTimeout.
	BodyTimeout time.Duration `envconfig:"BODY_TIMEOUT" default:"5s" desc:"time a request's body may take to arrive; slower gets 408"`
	// MaxEventStreams caps the event streams open at once (GET
	// /v1/runs/{id}/events); more get 503. 0: DefaultMaxEventStreams.
	MaxEventStreams int `envconfig:"MAX_EVENT_STREAMS" default:"64" desc:"event streams open at once; more get 503"`
	// WorkerTimeout is how long a registered worker may go without a
	// heartbeat before it is lost (a run's worker_timeout_ms overrides it
	// for the run's workers). 0: DefaultWorkerTimeout.
	WorkerTimeout time.Duration `envconfig:"WORKER_TIMEOUT" default:"3s" desc:"a worker silent this long is lost"`
}

// DefaultBodyTimeout is LOADGEND_BODY_TIMEOUT's default: a run spec is a
// few KiB, sent in one go by any client; seconds are plenty.
const DefaultBodyTimeout = 5 * time.Second

// DefaultMaxQueued is LOADGEND_MAX_QUEUED's default.
const DefaultMaxQueued = 100

// ErrConfig marks a configuration that cannot be served.
var ErrConfig = errors.New("configuration")

// LoadConfig reads the LOADGEND_* environment.
func LoadConfig() (Config, error) {
	var c Config
	if err := envconfig.Process("LOADGEND", &c); err != nil {
		return c, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	if c.MaxQueued == 0 {
		return c, fmt.Errorf("%w: LOADGEND_MAX_QUEUED must be positive", ErrConfig)
	}
	return c, c.Validate()
}

// SpecSources reads, as LoadConfig does, the variables that say what a run
// spec may read on this host (LOADGEND_DATA_ROOT, LOADGEND_SECRET_ENV,
// LOADGEND_SECRETS_DIR): a worker builds its coordinator's specs under its
// own (runspec.DaemonEnv).
func SpecSources() (api.Limits, error) {
	var c Config
	if err := envconfig.Process("LOADGEND", &c); err != nil {
		return api.Limits{}, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	return api.Limits{DataRoot: c.DataRoot, SecretEnv: c.SecretEnv, SecretsDir: c.SecretsDir}, nil
}

// Validate checks the configuration, naming the variable at fault.
func (c Config) Validate() error {
	host, _, err := net.SplitHostPort(c.Listen)
	if err != nil {
		return fmt.Errorf("%w: LOADGEND_LISTEN %q: %v", ErrConfig, c.Listen, err)
	}
	if c.APIToken == "" && !c.Insecure && !isLoopbackHost(host) {
		return fmt.Errorf("%w: LOADGEND_LISTEN %q is not a loopback address: set LOADGEND_API_TOKEN, or LOADGEND_INSECURE=true to serve without one", ErrConfig, c.Listen)
	}
	if c.DataDir == "" {
		return fmt.Errorf("%w: LOADGEND_DATA_DIR is empty", ErrConfig)
	}
	if !(c.MaxQPS > 0) {
		return fmt.Errorf("%w: LOADGEND_MAX_QPS must be positive", ErrConfig)
	}
	if c.MaxDuration <= 0 {
		return fmt.Errorf("%w: LOADGEND_MAX_DURATION must be positive", ErrConfig)
	}
	if c.MaxInflight <= 0 {
		return fmt.Errorf("%w: LOADGEND_MAX_INFLIGHT must be positive", ErrConfig)
	}
	if c.MaxQueued < 0 {
		return fmt.Errorf("%w: LOADGEND_MAX_QUEUED must be positive", ErrConfig)
	}
	if _, err := NewAllowlist(c.AllowedTargets); err != nil {
		return fmt.Errorf("%w: LOADGEND_ALLOWED_TARGETS: %v", ErrConfig, err)
	}
	if _, err := NewAllowlist(c.AllowedHosts); err != nil {
		return fmt.Errorf("%w: LOADGEND_ALLOWED_HOSTS: %v (want host names, *.suffix, IPs or CIDRs, without ports)", ErrConfig, err)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return fmt.Errorf("%w: LOADGEND_LOG_LEVEL %q: want debug, info, warn or error", ErrConfig, c.LogLevel)
	}
	if c.APIConcurrency < 0 {
		return fmt.Errorf("%w: LOADGEND_API_CONCURRENCY cannot be negative", ErrConfig)
	}
	if c.MaxEventStreams < 0 {
		return fmt.Errorf("%w: LOADGEND_MAX_EVENT_STREAMS cannot be negative", ErrConfig)
	}
	if c.BodyTimeout < 0 {
		return fmt.Errorf("%w: LOADGEND_BODY_TIMEOUT cannot be negative", ErrConfig)
	}
	if c.WorkerTimeout < 0 {
		return fmt.Errorf("%w: LOADGEND_WORKER_TIMEOUT cannot be negative", ErrConfig)
	}
	if c.DrainTimeout < 0 {
		return fmt.Errorf("%w: LOADGEND_DRAIN_TIMEOUT cannot be negative", ErrConfig)
	}
	return nil
}

// Level is the parsed log level.
func (c Config) Level() slog.Level {
	var level slog.Level
	_ = level.UnmarshalText([]byte(c.LogLevel))
	return level
}

// isLoopbackHost: "localhost", 127.0.0.0/8 or ::1. An empty host (":8080")
// listens on every interface, so it is not loopback.
func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
