package genai_test

import (
	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
)

// A prompt set is the engine's QSL for a generative run (an external test:
// the engine may import genai).
var _ loadgen.QSL = (*genai.Prompts)(nil)
