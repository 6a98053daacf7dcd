package httpclient

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/netloadgen/netloadgen/kserve"
)

// TestPathPrefixOnceOnEveryRequest: a target with a path prefix
// (http://gateway/serving/team-a) puts it once in front of every request's
// path, metadata and inference alike (it was doubled on the model's GETs).
func TestPathPrefixOnceOnEveryRequest(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.Method+" "+r.URL.Path)
		mu.Unlock()
		switch r.URL.Path {
		case "/serving/team-a/v2/models/m":
			json.NewEncoder(w).Encode(kserve.ModelMetadata{Name: "m"})
		case "/serving/team-a/v2/models/m/ready", "/serving/team-a/v2/health/live":
		case "/serving/team-a/v2/models/m/infer":
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"model_name":"m","outputs":[{"name":"o","datatype":"FP32","shape":[1],"data":[1]}]}`))
		default:
			http.NotFound(w, r)
		}
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	c, err := New("http://"+ln.Addr().String()+"/serving/team-a/", Binary(false))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if live, err := c.ServerLive(ctx); !live || err != nil {
		t.Errorf("ServerLive = %v, %v", live, err)
	}
	if md, err := c.ModelMetadata(ctx, "m", ""); err != nil || md.Name != "m" {
		t.Errorf("ModelMetadata = %+v, %v", md, err)
	}
	if ready, err := c.ModelReady(ctx, "m", ""); !ready || err != nil {
		t.Errorf("ModelReady = %v, %v", ready, err)
	}
	req := &kserve.InferRequest{Model: "m", Inputs: []kserve.Tensor{{Name: "i", Datatype: kserve.FP32, Shape: []int64{1}, Data: []byte{0, 0, 0x80, 0x3f}}}}
	if _, err := c.Infer(ctx, req); err != nil {
		t.Errorf("Infer: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"GET /serving/team-a/v2/health/live", "GET /serving/team-a/v2/models/m", "GET /serving/team-a/v2/models/m/ready", "POST /serving/team-a/v2/models/m/infer"}
	if !slices.Equal(paths, want) {
		t.Errorf("paths %q, want %q", paths, want)
	}
}
