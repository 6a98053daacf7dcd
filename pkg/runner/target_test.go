package runner

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/target"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/triton"
)

// fakeEndpoint answers the probe's questions from fields.
type fakeEndpoint struct {
	live, ready bool
	liveErr     error
	server      kserve.ServerMetadata
	model       kserve.ModelMetadata
	modelErr    error
	config      triton.ModelConfig
	configAsked bool
}

func (f *fakeEndpoint) ServerLive(context.Context) (bool, error) { return f.live, f.liveErr }
func (f *fakeEndpoint) ServerMetadata(context.Context) (kserve.ServerMetadata, error) {
	return f.server, nil
}
func (f *fakeEndpoint) ModelMetadata(context.Context, string, string) (kserve.ModelMetadata, error) {
	return f.model, f.modelErr
}
func (f *fakeEndpoint) ModelReady(context.Context, string, string) (bool, error) { return f.ready, nil }
func (f *fakeEndpoint) ModelConfig(context.Context, string, string) (triton.ModelConfig, error) {
	f.configAsked = true
	return f.config, nil
}
func (f *fakeEndpoint) Close() error { return nil }

// indexedEndpoint also lists its models, as Triton's repository index.
type indexedEndpoint struct {
	fakeEndpoint
	models []triton.RepositoryModel
}

func (f *indexedEndpoint) RepositoryIndex(context.Context) ([]triton.RepositoryModel, error) {
	return f.models, nil
}

// TestProbeUnknownModel: an unknown model's error lists the server's
// models and the nearest name where the server lists them, else says how
// to find them.
func TestProbeUnknownModel(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	tg := target.Target{Scheme: "http", Host: ln.Addr().String(), URL: "http://" + ln.Addr().String()}
	notFound := kserve.Errorf(5, "no such model")
	indexed := kserve.ServerMetadata{Extensions: []string{kserve.ExtModelRepository}}
	models := []triton.RepositoryModel{{Name: "identity"}, {Name: "resnet50", Version: "1"}, {Name: "resnet50", Version: "2"}}
	for _, c := range []struct {
		name  string
		ep    probeClient
		model string
		want  string
	}{
		{"indexed, near", &indexedEndpoint{fakeEndpoint{live: true, server: indexed, modelErr: notFound}, models}, "idnetity",
			`has no model "idnetity": did you mean identity? (it has identity, resnet50)`},
		{"indexed, far", &indexedEndpoint{fakeEndpoint{live: true, server: indexed, modelErr: notFound}, models}, "bert",
			`has no model "bert" (it has identity, resnet50)`},
		{"extension not listed", &indexedEndpoint{fakeEndpoint{live: true, modelErr: notFound}, models}, "bert",
			`has no model "bert" (this server does not list its models: see its model repository, or on Triton POST /v2/repository/index)`},
		{"no index over this transport", &fakeEndpoint{live: true, server: indexed, modelErr: notFound}, "bert",
			`has no model "bert" (its models are listed on its HTTP port: POST /v2/repository/index)`},
	} {
		_, err := probe(t.Context(), c.ep, tg, c.model, "", nil)
		if !errors.Is(err, target.ErrTarget) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v: want %q", c.name, err, c.want)
		}
	}
}

func TestProbe(t *testing.T) {
	// The probe dials the host itself before asking the client anything.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	tg := target.Target{Scheme: "http", Host: ln.Addr().String(), URL: "http://" + ln.Addr().String()}
	withConfig := kserve.ServerMetadata{Extensions: []string{kserve.ExtModelConfiguration}}
	batchedIn := []kserve.TensorMetadata{{Name: "IN", Datatype: kserve.FP32, Shape: []int64{-1, 16}}}
	fixedIn := []kserve.TensorMetadata{{Name: "IN", Datatype: kserve.FP32, Shape: []int64{16}}}
	cases := []struct {
		name        string
		ep          fakeEndpoint
		batched     bool
		maxBatch    int
		configAsked bool
		wantErr     string
	}{
		{name: "config says max_batch 8", ep: fakeEndpoint{live: true, ready: true, server: withConfig,
			model: kserve.ModelMetadata{Inputs: batchedIn}, config: triton.ModelConfig{MaxBatchSize: 8}},
			batched: true, maxBatch: 8, configAsked: true},
		{name: "config says no batching despite -1", ep: fakeEndpoint{live: true, ready: true, server: withConfig,
			model: kserve.ModelMetadata{Inputs: batchedIn}}, configAsked: true},
		{name: "no config extension, leading -1", ep: fakeEndpoint{live: true, ready: true,
			model: kserve.ModelMetadata{Inputs: batchedIn}}, batched: true, maxBatch: unknownMaxBatch},
		{name: "no config extension, fixed shape", ep: fakeEndpoint{live: true, ready: true,
			model: kserve.ModelMetadata{Inputs: fixedIn}}},
		{name: "not live", ep: fakeEndpoint{live: false}, wantErr: "not live"},
		{name: "wrong protocol", ep: fakeEndpoint{liveErr: kserve.ErrTransport}, wantErr: "does not answer as a KServe v2 HTTP server"},
		{name: "unknown model", ep: fakeEndpoint{live: true, modelErr: kserve.Errorf(5, "no such model")}, wantErr: `no model "m"`},
		{name: "not ready", ep: fakeEndpoint{live: true, model: kserve.ModelMetadata{Inputs: fixedIn}}, wantErr: `model "m" on ` + tg.URL + " is not ready"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := probe(t.Context(), &c.ep, tg, "m", "", nil)
			if c.wantErr != "" {
				if !errors.Is(err, target.ErrTarget) || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err %v: want target.ErrTarget mentioning %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Batched != c.batched || p.MaxBatch != c.maxBatch || c.ep.configAsked != c.configAsked {
				t.Errorf("batched %v, max batch %d, config asked %v; want %v, %d, %v",
					p.Batched, p.MaxBatch, c.ep.configAsked, c.batched, c.maxBatch, c.configAsked)
			}
		})
	}
	t.Run("dead port", func(t *testing.T) {
		dead, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := dead.Addr().String()
		dead.Close()
		ep := &fakeEndpoint{live: true}
		_, err = probe(t.Context(), ep, target.Target{Scheme: "grpc", Host: addr, URL: "grpc://" + addr}, "m", "", nil)
		if !errors.Is(err, target.ErrTarget) || !strings.Contains(err.Error(), "grpc://"+addr+" is not reachable") {
			t.Fatalf("err %v", err)
		}
	})
}

func TestSplitSize(t *testing.T) {
	cases := []struct {
		name  string
		asked int
		pr    Probe
		want  int
	}{
		{"asked wins", 4, Probe{Batched: true, MaxBatch: 16}, 4},
		{"config's max batch (adapter default)", 0, Probe{Batched: true, MaxBatch: 16}, 0},
		{"limit unknown", 0, Probe{Batched: true, MaxBatch: unknownMaxBatch}, unknownBatchSplit},
		{"limit unknown, asked", 64, Probe{Batched: true, MaxBatch: unknownMaxBatch}, 64},
		{"no batching", 0, Probe{}, 0},
	}
	for _, c := range cases {
		if got := splitSize(c.asked, &c.pr); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}
