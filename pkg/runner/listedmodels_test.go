package runner

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/triton"
)

type fakeIndex struct {
	models []triton.RepositoryModel
	err    error
}

func (f fakeIndex) RepositoryIndex(context.Context) ([]triton.RepositoryModel, error) {
	return f.models, f.err
}

// A probe lists the server's models only where the server says it has a
// repository index, cut at MaxListedModels, and none when the index fails.
func TestListedModels(t *testing.T) {
	many := make([]triton.RepositoryModel, 5000)
	for i := range many {
		many[i].Name = fmt.Sprint("m", i)
	}
	ext := []string{kserve.ExtModelRepository}
	if got := listedModels(t.Context(), fakeIndex{models: many}, ext); len(got) != MaxListedModels || got[0].Name != "m0" {
		t.Errorf("5,000 models listed as %d (first %v), want the first %d", len(got), got[:min(len(got), 1)], MaxListedModels)
	}
	if got := listedModels(t.Context(), fakeIndex{models: many[:3]}, nil); got != nil {
		t.Errorf("a server without the model_repository extension: %v listed, want none", got)
	}
	if got := listedModels(t.Context(), fakeIndex{err: errors.New("500")}, ext); got != nil {
		t.Errorf("a failed index: %v listed, want none", got)
	}
	if got := listedModels(t.Context(), struct{}{}, ext); got != nil {
		t.Errorf("a client without an index (gRPC): %v listed, want none", got)
	}
}
