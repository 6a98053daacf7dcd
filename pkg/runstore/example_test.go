package runstore_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/netloadgen/netloadgen/pkg/runstore"
)

// The life of a run as the daemon drives it.
func Example() {
	dir, _ := os.MkdirTemp("", "loadgend-data-")
	defer os.RemoveAll(dir)

	s, err := runstore.Open(dir) // at start-up: recovers from a crash
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	r, _ := s.Create(json.RawMessage(`{"model":"identity","scenario":"Server"}`))
	fmt.Println(r.State, len(s.Queued()))

	s.SetState(r.ID, runstore.Running, "")
	s.WriteFile(r.ID, runstore.ProgressFile, []byte(`{"issued":100}`))
	// The LoadGen logs and result.json are written into s.Dir(r.ID) by
	// pkg/runlog before the run is marked done.
	r, _ = s.SetState(r.ID, runstore.Done, "completed")
	fmt.Println(r.State)

	err = s.WriteFile(r.ID, runstore.ProgressFile, []byte(`{}`))
	fmt.Println(err != nil)

	f, _ := s.OpenFile(r.ID, runstore.ProgressFile)
	b, _ := io.ReadAll(f)
	f.Close()
	fmt.Println(string(b))
	// Output:
	// queued 1
	// done
	// true
	// {"issued":100}
}
