package daemon

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestConfigFromEnvironment(t *testing.T) {
	t.Setenv("LOADGEND_LISTEN", "127.0.0.1:9999")
	t.Setenv("LOADGEND_ALLOWED_TARGETS", "sut.internal, 10.0.0.0/8")
	t.Setenv("LOADGEND_ALLOWED_HOSTS", "loadgend.example,10.0.0.0/8,*.lab.example")
	t.Setenv("LOADGEND_MAX_QPS", "2500")
	t.Setenv("LOADGEND_MAX_TRACE_SAMPLES", "123456")
	c, err := LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxQueued != DefaultMaxQueued {
		t.Errorf("LOADGEND_MAX_QUEUED defaults to %d, want %d", c.MaxQueued, DefaultMaxQueued)
	}
	for v, ok := range map[string]bool{"5": true, "0": false, "-1": false, "many": false} {
		t.Setenv("LOADGEND_MAX_QUEUED", v)
		if c, err := LoadConfig(); (err == nil) != ok || (ok && c.MaxQueued != 5) || (!ok && !strings.Contains(err.Error(), "LOADGEND_MAX_QUEUED")) {
			t.Errorf("LOADGEND_MAX_QUEUED=%s: %+v %v", v, c.MaxQueued, err)
		}
	}
	if c.Listen != "127.0.0.1:9999" || c.MaxQPS != 2500 || len(c.AllowedTargets) != 2 || len(c.AllowedHosts) != 3 || c.DataDir != "./loadgend-data" || c.MaxTraceSamples != 123456 {
		t.Errorf("config %+v", c)
	}
}

func TestConfigRefusals(t *testing.T) {
	base := func() Config {
		return Config{Listen: "127.0.0.1:8080", DataDir: "d", MaxQPS: 1, MaxDuration: 1, MaxInflight: 1, LogLevel: "info"}
	}
	cases := []struct {
		name  string
		edit  func(*Config)
		field string // the variable the error must name; "" = valid
	}{
		{"loopback without token", func(c *Config) {}, ""},
		{"all interfaces without token", func(c *Config) { c.Listen = ":8080" }, "LOADGEND_LISTEN"},
		{"public address without token", func(c *Config) { c.Listen = "10.1.2.3:8080" }, "LOADGEND_LISTEN"},
		{"public address with token", func(c *Config) { c.Listen = "0.0.0.0:8080"; c.APIToken = "s3cret" }, ""},
		{"public address, insecure", func(c *Config) { c.Listen = "0.0.0.0:8080"; c.Insecure = true }, ""},
		{"ipv6 loopback", func(c *Config) { c.Listen = "[::1]:8080" }, ""},
		{"bad listen", func(c *Config) { c.Listen = "8080" }, "LOADGEND_LISTEN"},
		{"no data dir", func(c *Config) { c.DataDir = "" }, "LOADGEND_DATA_DIR"},
		{"zero qps", func(c *Config) { c.MaxQPS = 0 }, "LOADGEND_MAX_QPS"},
		{"zero duration", func(c *Config) { c.MaxDuration = 0 }, "LOADGEND_MAX_DURATION"},
		{"bad cidr", func(c *Config) { c.AllowedTargets = []string{"10.0.0.0/99"} }, "LOADGEND_ALLOWED_TARGETS"},
		{"allowed host with a port", func(c *Config) { c.AllowedHosts = []string{"loadgend.example:8080"} }, "LOADGEND_ALLOWED_HOSTS"},
		{"allowed host cidr", func(c *Config) { c.AllowedHosts = []string{"10.0.0.0/33"} }, "LOADGEND_ALLOWED_HOSTS"},
		{"negative queue cap", func(c *Config) { c.MaxQueued = -1 }, "LOADGEND_MAX_QUEUED"},
		{"bad level", func(c *Config) { c.LogLevel = "loud" }, "LOADGEND_LOG_LEVEL"},
		{"negative API concurrency", func(c *Config) { c.APIConcurrency = -1 }, "LOADGEND_API_CONCURRENCY"},
		{"negative body timeout", func(c *Config) { c.BodyTimeout = -1 }, "LOADGEND_BODY_TIMEOUT"},
		{"negative event streams", func(c *Config) { c.MaxEventStreams = -1 }, "LOADGEND_MAX_EVENT_STREAMS"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := base()
			tc.edit(&c)
			err := c.Validate()
			if tc.field == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.field) {
				t.Errorf("err = %v, want ErrConfig naming %s", err, tc.field)
			}
		})
	}
}

func TestAllowlist(t *testing.T) {
	a, err := NewAllowlist([]string{"sut.internal", "*.models.example", "10.0.0.0/8", "::1", "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]bool{
		"sut.internal": true, "SUT.internal": true, "other.internal": false,
		"a.models.example": true, "models.example": false,
		"10.3.4.5": true, "11.0.0.1": false, "::1": true, "[::1]": true, "127.0.0.1": true, "127.0.0.2": false,
		"localhost": true, // resolves to loopback addresses, all of them listed
	} {
		if got := a.Allows(t.Context(), host); got != want {
			t.Errorf("Allows(%q) = %v, want %v", host, got, want)
		}
	}
	open, _ := NewAllowlist(nil)
	if !open.Allows(t.Context(), "anything.example") {
		t.Error("an empty allowlist refused a target")
	}
	names, _ := NewAllowlist([]string{"sut.internal"})
	if names.Allows(t.Context(), "localhost") {
		t.Error("a name-only allowlist let an unlisted name through")
	}
}

// TestSpecSources: a worker reads what specs may read on its host from the
// variables the daemon reads, parsed as the daemon parses them.
func TestSpecSources(t *testing.T) {
	t.Setenv("LOADGEND_DATA_ROOT", "/data")
	t.Setenv("LOADGEND_SECRET_ENV", "TOKEN_A,TOKEN_B")
	t.Setenv("LOADGEND_SECRETS_DIR", "/run/secrets")
	lim, err := SpecSources()
	if err != nil {
		t.Fatal(err)
	}
	if lim.DataRoot != "/data" || len(lim.SecretEnv) != 2 || lim.SecretEnv[1] != "TOKEN_B" || lim.SecretsDir != "/run/secrets" {
		t.Errorf("spec sources %+v", lim)
	}
	cfg, err := LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DataRoot != lim.DataRoot || !slices.Equal(cfg.SecretEnv, lim.SecretEnv) || cfg.SecretsDir != lim.SecretsDir {
		t.Errorf("the daemon reads %q %q %q, the worker %+v", cfg.DataRoot, cfg.SecretEnv, cfg.SecretsDir, lim)
	}
}
