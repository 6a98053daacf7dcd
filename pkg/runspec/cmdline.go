package runspec

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"strings"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/secret"
)

// FlagKind is how a `loadgend run` flag carries its spec field's value.
type FlagKind string

// The kinds of FlagTable's flags.
const (
	KindString     FlagKind = "string"      // --flag VALUE
	KindNumber     FlagKind = "number"      // --flag N (an integer or a float field)
	KindOptBool    FlagKind = "opt_bool"    // --flag=true|false (an optional field: false is a value)
	KindBool       FlagKind = "bool"        // --flag when true (false is the field left out)
	KindDurationMs FlagKind = "duration_ms" // --flag Nms (a duration flag, a field in ms)
	KindDurationNs FlagKind = "duration_ns" // --flag Nns (a duration flag, a field in ns)
	KindList       FlagKind = "list"        // --flag V, repeated for each element
	KindNumberList FlagKind = "number_list" // --flag A,B,C
	KindFileRef    FlagKind = "file_ref"    // --flag PATH for the field's "@file:PATH"
	// KindFileText is a flag that names a file whose text the field holds
	// (--user-conf FILE): the text itself no flag carries.
	KindFileText FlagKind = "file_text"
	// KindHeaders is --header 'Name: value', repeated: a reference only,
	// never a literal value (a secret).
	KindHeaders FlagKind = "headers"
	// KindTrialEarlyVerdict is find-peak's --trial-early-verdict, which
	// the CLI ORs with settings.early_verdict (a sweep's is
	// settings.early_verdict itself).
	KindTrialEarlyVerdict FlagKind = "trial_early_verdict"
)

// Flag is one `loadgend run` flag that fills a spec field: its name, the
// field's JSON path, and how it carries the value.
type Flag struct {
	Name string
	Path string
	Kind FlagKind
}

// FlagTable is every `loadgend run` flag registered with a spec field
// (cmd/loadgend registers them; its tests hold the two together, flag for
// flag and round trip), in the order CommandLine writes them. Treat it as
// read-only. --mode is not in it: CommandLine writes it from search.mode.
var FlagTable = []Flag{
	{"target", "target", KindString},
	{"model", "model", KindString},
	{"model-version", "model_version", KindString},
	{"scenario", "scenario", KindString},
	{"ruleset", "ruleset", KindString},
	{"preset", "preset", KindString},
	{"mlperf-conf", "mlperf_conf", KindFileText},
	{"user-conf", "user_conf", KindFileText},
	{"target-qps", "settings.target_qps", KindNumber},
	{"target-latency-ms", "settings.target_latency_ms", KindNumber},
	{"latency-percentile", "settings.latency_percentile", KindNumber},
	{"expected-latency-ns", "settings.expected_latency_ns", KindNumber},
	{"samples-per-query", "settings.samples_per_query", KindNumber},
	{"interval-ms", "settings.interval_ms", KindNumber},
	{"min-duration-ms", "settings.min_duration_ms", KindNumber},
	{"max-duration-ms", "settings.max_duration_ms", KindNumber},
	{"min-query-count", "settings.min_query_count", KindNumber},
	{"max-query-count", "settings.max_query_count", KindNumber},
	{"use-token-latencies", "settings.use_token_latencies", KindOptBool},
	{"ttft-latency-ms", "settings.ttft_latency_ms", KindNumber},
	{"tpot-latency-ms", "settings.tpot_latency_ms", KindNumber},
	{"infer-token-latencies", "settings.infer_token_latencies", KindOptBool},
	{"token-latency-scaling-factor", "settings.token_latency_scaling_factor", KindNumber},
	{"qsl-seed", "settings.qsl_rng_seed", KindNumber},
	{"sample-seed", "settings.sample_index_rng_seed", KindNumber},
	{"schedule-seed", "settings.schedule_rng_seed", KindNumber},
	{"concat-perm", "settings.sample_concatenate_permutation", KindOptBool},
	{"issue-unique", "settings.performance_issue_unique", KindOptBool},
	{"drain-timeout-ms", "settings.drain_timeout_ms", KindNumber},
	{"early-verdict", "settings.early_verdict", KindOptBool},
	{"warmup-ms", "settings.warmup_ms", KindNumber},
	{"concurrency", "settings.concurrency", KindNumber},
	{"issuers", "settings.issuers", KindNumber},
	{"total-samples", "total_samples", KindNumber},
	{"performance-samples", "performance_samples", KindNumber},
	{"stages", "stages", KindString},
	{"arrivals", "arrivals", KindString},
	{"trace", "trace", KindString},
	{"trace-speed", "trace_speed", KindNumber},
	{"trace-start", "trace_start_ms", KindDurationMs},
	{"trace-duration", "trace_duration_ms", KindDurationMs},
	{"mix", "mix", KindString},
	{"data", "data", KindString},
	{"input-tokens", "input_tokens", KindString},
	{"output-tokens", "output_tokens", KindString},
	{"shared-prefix", "shared_prefix", KindString},
	{"sessions", "sessions", KindString},
	{"think-time", "think_time", KindString},
	{"slo", "slo", KindString},
	{"sut-name", "sut_name", KindString},
	{"api", "api", KindString},
	{"batch-size", "batch_size", KindNumber},
	{"max-inflight", "max_inflight", KindNumber},
	{"conns", "conns", KindNumber},
	{"json", "json", KindBool},
	{"http-client", "http_client", KindString},
	{"grpc-client", "grpc_client", KindString},
	{"request-timeout", "request_timeout_ms", KindDurationMs},
	{"max-response-bytes", "max_response_bytes", KindNumber},
	{"issue-slack", "issue_slack_ns", KindDurationNs},
	{"header", "headers", KindHeaders},
	{"tls-ca", "tls.ca_pem", KindFileText},
	{"tls-server-name", "tls.server_name", KindString},
	{"tls-cert", "tls.client_cert", KindFileRef},
	{"tls-key", "tls.client_key", KindFileRef},
	{"tls-insecure", "tls.insecure_skip_verify", KindBool},
	{"server-metrics", "server_metrics", KindList},
	{"server-metrics-interval", "server_metrics_interval_ms", KindDurationMs},
	{"server-metrics-max-series", "server_metrics_max_series", KindNumber},
	{"server-metrics-max-bytes", "server_metrics_max_bytes", KindNumber},
	{"no-server-metrics", "no_server_metrics", KindBool},
	{"no-server-statistics", "no_server_statistics", KindBool},
	{"search-start", "search.lower_qps", KindNumber},
	{"search-upper", "search.upper_qps", KindNumber},
	{"search-precision", "search.precision", KindNumber},
	{"search-delta", "search.delta", KindNumber},
	{"verify-runs", "search.verify_runs", KindNumber},
	{"max-trials", "search.max_trials", KindNumber},
	{"goodput", "search.goodput_percent", KindNumber},
	{"trial-early-verdict", "search.early_verdict", KindTrialEarlyVerdict},
	{"rates", "search.rates", KindNumberList},
	{"trace-speeds", "search.trace_speeds", KindNumberList},
	{"sweep-stop-saturated", "search.stop_saturated", KindBool},
	{"trial-warmup-ms", "search.trial_warmup_ms", KindNumber},
	{"retry-failed-trials", "search.retry_failed_trials", KindNumber},
	{"search-strategy", "search.strategy", KindString},
	{"scout-duration", "search.scout_duration_ms", KindDurationMs},
	{"workers", "workers", KindNumber},
	{"workers-wait-ms", "workers_wait_ms", KindNumber},
	{"max-clock-uncertainty-ms", "max_clock_uncertainty_ms", KindNumber},
	{"worker-timeout-ms", "worker_timeout_ms", KindNumber},
}

// CommandLine is the `loadgend run` command line that fills the same spec
// as s: "loadgend", "run", --mode for a search (search.mode), then the
// flags of s's set fields in FlagTable's order. notExpressible are the JSON paths of
// the set fields no flag carries (LoadGen's own settings names, the conf
// texts and the CA's PEM, which the flags take as files, a header's
// literal value, a find-peak's early verdict the CLI cannot separate from
// settings.early_verdict), sorted; empty when the command line is exact.
// Header values appear only as references (@env:, @file:), never literal:
// a literal is a secret, left out and named in notExpressible. A field
// added to api.RunSpec without a flag shows in notExpressible until it
// has one.
func CommandLine(s api.RunSpec) (args, notExpressible []string) {
	if s.IssueSlackUs != 0 && s.IssueSlackNs == 0 {
		// The flag's duration is the ns field; the same slack.
		s.IssueSlackNs, s.IssueSlackUs = s.IssueSlackUs*1000, 0
	}
	fields := flatten(s)
	args = []string{"loadgend", "run"}
	if s.Search != nil {
		args = append(args, "--mode", s.Search.Mode)
	}
	lost := map[string]bool{}
	for _, f := range FlagTable {
		if f.Kind == KindHeaders {
			args = appendHeaders(args, f.Name, s.Headers, lost)
			continue
		}
		v, ok := fields[f.Path]
		if !ok {
			continue
		}
		delete(fields, f.Path)
		if f.Kind == KindTrialEarlyVerdict {
			args = appendTrialEarlyVerdict(args, f.Name, s, lost)
			continue
		}
		a, ok := flagArgs(f, v)
		if !ok {
			lost[f.Path] = true
			continue
		}
		args = append(args, a...)
	}
	delete(fields, "search.mode")
	for p := range fields {
		lost[p] = true
	}
	for p := range lost {
		notExpressible = append(notExpressible, p)
	}
	sort.Strings(notExpressible)
	return args, notExpressible
}

// flagArgs are one flag's arguments for its field's value v (as JSON
// decodes it, numbers as json.Number); false when no flag says it.
func flagArgs(f Flag, v any) ([]string, bool) {
	name := "--" + f.Name
	switch f.Kind {
	case KindString, KindNumber, KindDurationMs, KindDurationNs:
		text := scalar(v)
		switch f.Kind {
		case KindDurationMs:
			text += "ms"
		case KindDurationNs:
			text += "ns"
		}
		return []string{name, text}, true
	case KindOptBool:
		return []string{name + "=" + scalar(v)}, true
	case KindBool:
		return []string{name}, v == true
	case KindFileRef:
		path, ok := strings.CutPrefix(scalar(v), api.FileRef)
		return []string{name, path}, ok && path != ""
	case KindList:
		var out []string
		for _, e := range asList(v) {
			out = append(out, name, scalar(e))
		}
		return out, true
	case KindNumberList:
		var parts []string
		for _, e := range asList(v) {
			parts = append(parts, scalar(e))
		}
		return []string{name, strings.Join(parts, ",")}, true
	}
	return nil, false // KindFileText: the flag takes a file, the field its text
}

// appendHeaders writes a --header for each header given by reference,
// sorted by name; a literal value (a secret, or <redacted> as stored) is
// left out and its path marked lost.
func appendHeaders(args []string, flag string, hs map[string]string, lost map[string]bool) []string {
	names := make([]string, 0, len(hs))
	for name := range hs {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		v := hs[name]
		if !secret.IsRef(v) {
			lost["headers."+name] = true
			continue
		}
		args = append(args, "--"+flag, name+": "+v)
	}
	return args
}

// appendTrialEarlyVerdict writes search.early_verdict: find-peak's
// --trial-early-verdict (default true) is ORed with
// settings.early_verdict; a sweep's is settings.early_verdict itself.
func appendTrialEarlyVerdict(args []string, flag string, s api.RunSpec, lost map[string]bool) []string {
	ev := *s.Search.EarlyVerdict
	settings := s.Overrides.EarlyVerdict
	if s.Search.Mode == api.SearchSweep {
		if settings == nil || *settings != ev {
			lost["search.early_verdict"] = true
		}
		return args
	}
	switch {
	case ev:
		return args // the flag's default
	case settings != nil && *settings:
		lost["search.early_verdict"] = true
		return args
	}
	return append(args, "--"+flag+"=false")
}

// flatten is s's set fields as JSON has them, by JSON path ("settings.
// target_qps"), numbers as json.Number; an array is one field, headers
// are appendHeaders'.
func flatten(s api.RunSpec) map[string]any {
	s.Headers = nil
	b, err := json.Marshal(s)
	if err != nil {
		return map[string]any{} // a RunSpec always encodes
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return map[string]any{}
	}
	out := map[string]any{}
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			if sub, ok := v.(map[string]any); ok {
				walk(prefix+k+".", sub)
				continue
			}
			out[prefix+k] = v
		}
	}
	walk("", m)
	return out
}

func scalar(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case bool:
		if v {
			return "true"
		}
		return "false"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// ShellQuote is args as one line a POSIX shell reads back as args: each
// argument that holds anything but letters, digits and -_./:=@%+, in
// single quotes; a single quote inside closes the quotes, is escaped
// with a backslash, and reopens them.
func ShellQuote(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = quoteArg(a)
	}
	return strings.Join(out, " ")
}

func quoteArg(a string) string {
	if a == "" {
		return "''"
	}
	safe := !strings.ContainsFunc(a, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@%+,", r))
	})
	if safe {
		return a
	}
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}
