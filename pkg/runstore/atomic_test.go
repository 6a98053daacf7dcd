package runstore

import (
	"errors"
	"os"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/atomicfile"
)

// The atomic write itself is pkg/atomicfile's and tested there; the store
// adds the refusal of names that are not plain file names.
func TestWriteFileRefusesNames(t *testing.T) {
	dir := t.TempDir()
	s := &Store{write: atomicfile.WriteFile}
	for _, name := range []string{"", ".", "..", "../x", "a/b", `a\b`, "/abs", "x\x00y", tempPrefix + "x", atomicfile.TempPrefix + "x"} {
		if err := s.writeFile(dir, name, []byte("x")); !errors.Is(err, ErrFileName) {
			t.Errorf("writeFile(%q): %v, want ErrFileName", name, err)
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 0 {
		t.Errorf("refused writes left %d entries", len(ents))
	}
}
