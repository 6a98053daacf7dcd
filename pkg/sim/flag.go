package sim

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/netloadgen/netloadgen/kserve"
)

// FlagSyntax summarises ParseModelFlag's syntax, for a flag's usage text.
const FlagSyntax = `name=NAME[,fn=echo|add_sub|classify][,classes=N][,dtype=FP32][,dims=16|3x32x32][,inputs=N]` +
	`[,max_batch=8][,latency=constant:2ms|uniform:1ms:3ms|lognormal:2ms:0.3|empirical:1ms:2ms:5ms|none]` +
	`[,per_sample=100us][,instances=N][,batch=N][,delay=1ms][,versions=1:2][,platform=P][,seed=N][,cache=1][,cache_hit=50us]` +
	`[,degrade_after=5s,degrade_factor=3][,transient=200ms,transient_latency=80ms][,idle=1s][,restart=idle|probe]`

// ParseModelFlag parses the compact model syntax of `sutproxy --model`: comma
// separated key=value pairs (FlagSyntax), for example
//
//	name=fast,fn=echo,dtype=FP32,dims=16,latency=constant:2ms,instances=4,batch=8,delay=1ms
//
// Inputs are INPUT0..INPUTn-1 (inputs=, default 1; add_sub: 2 INT32), all of
// dtype (default FP32) and per-sample dims (default 16; x-separated); outputs
// follow from fn (default echo). max_batch (default 8; 0 for no batch
// dimension) is the model's max_batch_size; batch=N turns on dynamic
// batching with at most N samples (raising max_batch to N if needed) and
// delay its max queue delay. latency is distribution:parameters with
// lognormal as median:sigma. versions lists versions separated by ':'.
//
// kind=llm makes an LLM model instead (LLMFlagSyntax).
func ParseModelFlag(s string) (ModelSpec, error) {
	if isLLMFlag(s) {
		return parseLLMFlag(s)
	}
	spec := ModelSpec{Function: Echo, MaxBatchSize: 8}
	dtype, dims, inputs := kserve.FP32, []int64{16}, 1
	var dtypeSet, maxBatchSet bool
	seen := map[string]bool{}
	for _, kv := range strings.Split(s, ",") {
		key, val, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || key == "" {
			return ModelSpec{}, fmt.Errorf("sim: --model %q: %q is not key=value", s, kv)
		}
		if seen[key] {
			return ModelSpec{}, fmt.Errorf("sim: --model %q: key %q given twice", s, key)
		}
		seen[key] = true
		if err := setFlagKey(&spec, key, val, &dtype, &dims, &inputs); err != nil {
			return ModelSpec{}, fmt.Errorf("sim: --model %q: key %q: %w", s, key, err)
		}
		dtypeSet = dtypeSet || key == "dtype"
		maxBatchSet = maxBatchSet || key == "max_batch"
	}
	if spec.Name == "" {
		return ModelSpec{}, fmt.Errorf("sim: --model %q: key \"name\" is required", s)
	}
	if spec.Function == AddSub {
		if !seen["inputs"] {
			inputs = 2
		}
		if !dtypeSet {
			dtype = kserve.Int32
		}
	}
	for _, pair := range [][2]string{{"degrade_after", "degrade_factor"}, {"transient", "transient_latency"}} {
		if seen[pair[0]] != seen[pair[1]] {
			return ModelSpec{}, fmt.Errorf("sim: --model %q: keys %q and %q go together: give both", s, pair[0], pair[1])
		}
	}
	if seen["delay"] && !seen["batch"] {
		return ModelSpec{}, fmt.Errorf("sim: --model %q: key \"delay\": needs batch=N", s)
	}
	if b := spec.DynamicBatching; b != nil && b.MaxBatchSize > spec.MaxBatchSize && !maxBatchSet {
		spec.MaxBatchSize = b.MaxBatchSize
	}
	shape := dims
	if spec.MaxBatchSize > 0 {
		shape = append([]int64{-1}, dims...)
	}
	for i := range inputs {
		spec.Inputs = append(spec.Inputs, TensorSpec{Name: "INPUT" + strconv.Itoa(i), Datatype: dtype, Shape: append([]int64(nil), shape...)})
	}
	if err := spec.Validate(); err != nil {
		return ModelSpec{}, fmt.Errorf("sim: --model %q: %w", s, err)
	}
	return spec, nil
}

func setFlagKey(spec *ModelSpec, key, val string, dtype *kserve.DataType, dims *[]int64, inputs *int) error {
	var err error
	switch key {
	case "name":
		spec.Name = val
	case "fn":
		spec.Function = Function(val)
	case "classes":
		spec.NumClasses, err = flagInt(val, 1)
	case "dtype":
		*dtype = kserve.DataType(strings.ToUpper(val))
		if !dtype.Valid() {
			return fmt.Errorf("unknown datatype %q", val)
		}
	case "dims":
		*dims = nil
		for _, d := range strings.Split(val, "x") {
			n, err := strconv.ParseInt(d, 10, 64)
			if err != nil || n < -1 || n == 0 {
				return fmt.Errorf("%q: want dimensions like 16 or 3x32x32 (-1 for variable)", val)
			}
			*dims = append(*dims, n)
		}
	case "inputs":
		*inputs, err = flagInt(val, 1)
		if err == nil && *inputs > 64 {
			err = fmt.Errorf("%d inputs: at most 64", *inputs)
		}
	case "max_batch":
		spec.MaxBatchSize, err = flagInt(val, 0)
	case "latency":
		spec.Latency, err = parseLatency(val, spec.Latency.PerSample)
	case "per_sample":
		var d time.Duration
		d, err = time.ParseDuration(val)
		spec.Latency.PerSample = Duration(d)
	case "instances":
		spec.Instances, err = flagInt(val, 1)
	case "batch":
		n, e := flagInt(val, 1)
		spec.DynamicBatching, err = batchingOf(spec), e
		spec.DynamicBatching.MaxBatchSize = n
	case "delay":
		var d time.Duration
		d, err = time.ParseDuration(val)
		spec.DynamicBatching = batchingOf(spec)
		spec.DynamicBatching.MaxQueueDelay = Duration(d)
	case "versions", "version":
		spec.Versions = strings.Split(val, ":")
	case "platform":
		spec.Platform = val
	case "cache":
		spec.Cache, err = strconv.ParseBool(val)
	case "cache_hit":
		var d time.Duration
		d, err = time.ParseDuration(val)
		spec.CacheHitLatency = Duration(d)
	case "seed":
		spec.Seed, err = strconv.ParseUint(val, 10, 64)
	case "restart":
		spec.Restart = val
	case "degrade_after", "degrade_factor", "transient", "transient_latency", "idle":
		err = setDriftKey(spec, key, val)
	default:
		return fmt.Errorf("unknown key; the syntax is %s", FlagSyntax)
	}
	return err
}

// batchingOf is spec's batching, created on first use so that batch= and
// delay= may come in either order.
func batchingOf(spec *ModelSpec) *BatchingSpec {
	if spec.DynamicBatching == nil {
		return &BatchingSpec{}
	}
	return spec.DynamicBatching
}

func flagInt(val string, least int) (int, error) {
	n, err := strconv.Atoi(val)
	if err != nil || n < least {
		return 0, fmt.Errorf("%q: want an integer >= %d", val, least)
	}
	return n, nil
}

// parseLatency reads distribution:params; perSample carries over a
// per_sample= given before it.
func parseLatency(val string, perSample Duration) (LatencySpec, error) {
	parts := strings.Split(val, ":")
	l := LatencySpec{Distribution: parts[0], PerSample: perSample}
	args := parts[1:]
	durs := func(want int) ([]Duration, error) {
		if want >= 0 && len(args) != want {
			return nil, fmt.Errorf("%q: %s takes %d parameters", val, l.Distribution, want)
		}
		out := make([]Duration, len(args))
		for i, a := range args {
			d, err := time.ParseDuration(a)
			if err != nil {
				return nil, fmt.Errorf("%q: %w", val, err)
			}
			out[i] = Duration(d)
		}
		return out, nil
	}
	switch l.Distribution {
	case "none", "0":
		if len(args) > 0 {
			return l, fmt.Errorf("%q: none takes no parameters", val)
		}
		l.Distribution = ""
	case Constant:
		d, err := durs(1)
		if err != nil {
			return l, err
		}
		l.Value = d[0]
	case Uniform:
		d, err := durs(2)
		if err != nil {
			return l, err
		}
		l.Min, l.Max = d[0], d[1]
	case LogNormal:
		if len(args) != 2 {
			return l, fmt.Errorf("%q: lognormal takes median:sigma", val)
		}
		med, err := time.ParseDuration(args[0])
		if err != nil {
			return l, fmt.Errorf("%q: %w", val, err)
		}
		sigma, err := strconv.ParseFloat(args[1], 64)
		if err != nil {
			return l, fmt.Errorf("%q: sigma: %w", val, err)
		}
		l.Median, l.Sigma = Duration(med), sigma
	case Empirical:
		d, err := durs(-1)
		if err != nil {
			return l, err
		}
		if len(d) == 0 {
			return l, fmt.Errorf("%q: empirical needs durations", val)
		}
		l.Samples = d
	default:
		return l, fmt.Errorf("%q: distribution is constant, uniform, lognormal, empirical or none", val)
	}
	return l, nil
}

// setDriftKey sets one of the degrade and transient laws' keys.
func setDriftKey(spec *ModelSpec, key, val string) error {
	if key == "degrade_factor" {
		f, err := strconv.ParseFloat(val, 64)
		if err != nil {
			return fmt.Errorf("%q: want a number >= 1, such as 3 or 2.5", val)
		}
		spec.Degrade = degradeOf(spec)
		spec.Degrade.Factor = f
		return nil
	}
	d, err := time.ParseDuration(val)
	if err != nil || d <= 0 {
		return fmt.Errorf("%q: want a duration > 0, such as 200ms or 5s", val)
	}
	switch key {
	case "degrade_after":
		spec.Degrade = degradeOf(spec)
		spec.Degrade.After = Duration(d)
	case "transient":
		spec.Transient = transientOf(spec)
		spec.Transient.Window = Duration(d)
	case "transient_latency":
		spec.Transient = transientOf(spec)
		spec.Transient.Latency = Duration(d)
	case "idle":
		spec.Idle = Duration(d)
	}
	return nil
}

func degradeOf(spec *ModelSpec) *DegradeSpec {
	if spec.Degrade == nil {
		return &DegradeSpec{}
	}
	return spec.Degrade
}

func transientOf(spec *ModelSpec) *TransientSpec {
	if spec.Transient == nil {
		return &TransientSpec{}
	}
	return spec.Transient
}
