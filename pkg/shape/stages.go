package shape

import (
	"errors"
	"time"

	"github.com/netloadgen/netloadgen/pkg/trace"
)

// Stage is one stage of --stages: Duration at a rate going linearly from
// From to To queries a second (To == From: a constant stage).
type Stage struct {
	Duration time.Duration
	From, To float64
}

// ParseStages reads --stages: "30s:100,60s:100->500,30s:500" (DURATION:RATE
// or DURATION:FROM->TO, one after the other). Errors wrap ErrShape and
// name --stages.
func ParseStages(v string) ([]Stage, error) { return nil, errors.ErrUnsupported }

// Process is --arrivals: how queries arrive at a stage's rate.
type Process struct {
	// Kind is "poisson" (the default), "constant" or "gamma".
	Kind string
	// CV is gamma's coefficient of variation of the inter-arrival times
	// (> 1: burstier than Poisson, whose CV is 1).
	CV float64
}

// ParseArrivals reads --arrivals: poisson | constant | gamma:CV. Errors
// wrap ErrShape and name --arrivals.
func ParseArrivals(v string) (Process, error) { return Process{}, errors.ErrUnsupported }

// String is p in ParseArrivals' syntax.
func (p Process) String() string { return p.Kind }

// StagedOptions configure Staged.
type StagedOptions struct {
	Stages   []Stage
	Arrivals Process
	// Seed draws the arrival times (the run's schedule seed).
	Seed uint64
	// Mix, when set, draws each query's model (Arrival.Model); MixSeed
	// seeds it.
	Mix     *Mix
	MixSeed uint64
}

// Staged is the shape of stages one after the other, Arrival.Stage the
// index of the stage an arrival falls in, End the stages' total.
func Staged(o StagedOptions) (trace.Shape, error) { return nil, errors.ErrUnsupported }
