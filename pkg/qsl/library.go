package qsl

import (
	"context"

	"github.com/netloadgen/netloadgen/kserve"
)

// Sample is one sample: a tensor per model input, shaped without the batch
// dimension, data raw little-endian.
type Sample struct {
	Inputs []kserve.Tensor
}

// Library is a query sample library: the engine's QSL plus access to the
// loaded samples.
type Library interface {
	TotalSampleCount() int
	PerformanceSampleCount() int
	// Load prepares the given indices; Sample may only be called for them.
	Load(ctx context.Context, indices []int) error
	Sample(index int) *Sample
}
