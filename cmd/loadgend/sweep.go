package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/netloadgen/netloadgen/api"
)

// sweepFlags are the flags of --mode sweep: the rates of the spec's search
// block, given as a list or as a range.
type sweepFlags struct {
	rates, rateRange string
	stopSaturated    bool
	// traceSpeeds sweeps a --trace replay's speed instead of the rate.
	traceSpeeds string
}

func addSweepFlags(f *specFlags) *sweepFlags {
	s := &sweepFlags{}
	fs := f.fs
	fs.StringVar(&s.rates, "rates", "", "sweep: the target QPS of each trial, in order, e.g. 1000,2000,4000")
	fs.StringVar(&s.rateRange, "rate-range", "", "sweep: start:end:step target QPS, end included, e.g. 1000:4000:1000")
	fs.BoolVar(&s.stopSaturated, "sweep-stop-saturated", false, "sweep: stop after a trial that completed less than 80% of its rate")
	fs.StringVar(&s.traceSpeeds, "trace-speeds", "", "sweep with --trace: replay the trace once per speed, in order, e.g. 0.5,1,2 (instead of --rates)")
	f.flagOf["search.trace_speeds"] = "trace-speeds"
	f.flagOf["search.rates"] = "rates"
	f.flagOf["search.stop_saturated"] = "sweep-stop-saturated"
	return s
}

// search is the spec's search block for --mode sweep; --early-verdict
// stops its trials early too (off by default: a sweep measures each rate).
func (s *sweepFlags) search(early *bool) (*api.Search, error) {
	var rates []float64
	var err error
	switch {
	case s.traceSpeeds != "" && (s.rates != "" || s.rateRange != ""):
		return nil, errors.New("--trace-speeds sweeps a trace's speed, --rates and --rate-range a rate: give one of them")
	case s.traceSpeeds != "":
		speeds, err := parseSpeeds(s.traceSpeeds)
		if err != nil {
			return nil, err
		}
		return &api.Search{Mode: api.SearchSweep, TraceSpeeds: speeds, StopSaturated: s.stopSaturated, EarlyVerdict: early}, nil
	case s.rates != "" && s.rateRange != "":
		return nil, errors.New("--rates and --rate-range: give one of them")
	case s.rates != "":
		rates, err = parseRates(s.rates)
	case s.rateRange != "":
		rates, err = parseRateRange(s.rateRange)
	default:
		return nil, errors.New("--mode sweep needs --rates (e.g. 1000,2000,4000) or --rate-range (e.g. 1000:4000:1000), or with --trace, --trace-speeds (e.g. 0.5,1,2)")
	}
	if err != nil {
		return nil, err
	}
	return &api.Search{Mode: api.SearchSweep, Rates: rates, StopSaturated: s.stopSaturated, EarlyVerdict: early}, nil
}

// given says whether a sweep flag was given, for the modes that take none.
func (s *sweepFlags) given() string {
	switch {
	case s.rates != "":
		return "--rates"
	case s.rateRange != "":
		return "--rate-range"
	case s.stopSaturated:
		return "--sweep-stop-saturated"
	case s.traceSpeeds != "":
		return "--trace-speeds"
	}
	return ""
}

// parseRates reads --rates: comma-separated positive numbers.
func parseRates(text string) ([]float64, error) {
	return parseList(text, "--rates", "rates", math.Inf(1), "is not a positive number of queries/s (e.g. --rates 1000,2000,4000)")
}

// parseRateRange reads --rate-range start:end:step into its rates, end
// included when a step lands on it (perf_analyzer's --request-rate-range).
func parseRateRange(text string) ([]float64, error) {
	parts := strings.Split(text, ":")
	if len(parts) != 3 {
		return nil, fmt.Errorf("--rate-range: %q is not start:end:step (e.g. --rate-range 1000:4000:1000)", text)
	}
	var v [3]float64
	for i, p := range parts {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || !(f > 0) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("--rate-range: %q in %q is not a positive number (start:end:step, e.g. 1000:4000:1000)", p, text)
		}
		v[i] = f
	}
	start, end, step := v[0], v[1], v[2]
	if end < start {
		return nil, fmt.Errorf("--rate-range: end %v is below start %v", end, start)
	}
	// A tolerance of a millionth of a step lets 0.1:0.3:0.1 reach 0.3.
	n := math.Floor((end-start)/step+1e-6) + 1
	if n > api.MaxSweepRates {
		return nil, fmt.Errorf("--rate-range: %q makes %.0f trials; a sweep runs at most %d (take a larger step)", text, n, api.MaxSweepRates)
	}
	rates := make([]float64, int(n))
	for i := range rates {
		rates[i] = start + float64(i)*step
	}
	return rates, nil
}

// parseSpeeds reads --trace-speeds: comma-separated positive speeds.
func parseSpeeds(text string) ([]float64, error) {
	return parseList(text, "--trace-speeds", "speeds", api.MaxTraceSpeed,
		fmt.Sprintf("is not a speed in (0, %d] (e.g. --trace-speeds 0.5,1,2)", api.MaxTraceSpeed))
}

// parseList reads a sweep's comma-separated values, each in (0, most],
// at most api.MaxSweepRates of them; a bad one is named with what.
func parseList(text, flag, noun string, most float64, what string) ([]float64, error) {
	parts := strings.Split(text, ",")
	if len(parts) > api.MaxSweepRates {
		return nil, fmt.Errorf("%s: %d %s; a sweep runs at most %d trials", flag, len(parts), noun, api.MaxSweepRates)
	}
	out := make([]float64, 0, len(parts))
	for _, p := range parts {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) || v > most {
			return nil, fmt.Errorf("%s: %q %s", flag, strings.TrimSpace(p), what)
		}
		out = append(out, v)
	}
	return out, nil
}
