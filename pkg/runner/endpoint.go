package runner

import (
	"context"
	"crypto/tls"
	"fmt"
	"slices"
	"time"

	"github.com/netloadgen/netloadgen/pkg/target"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/qsl"
	"github.com/netloadgen/netloadgen/pkg/secret"
	"github.com/netloadgen/netloadgen/pkg/sut"
	"github.com/netloadgen/netloadgen/triton"
)

// EndpointReport is what a probe learnt about an endpoint: enough for a user
// to check a target before a run.
type EndpointReport struct {
	Target     string                `json:"target"`
	Live       bool                  `json:"live"`
	Ready      bool                  `json:"ready"`
	Server     kserve.ServerMetadata `json:"server"`
	Extensions []string              `json:"extensions"`
	// Model is set when a model was named.
	Model *Probe `json:"model,omitempty"`
	// Models are the server's models, where it lists them (the
	// model_repository extension, over HTTP: KServe v2's gRPC service has
	// no list), at most MaxListedModels of them; nil otherwise.
	Models []triton.RepositoryModel `json:"models,omitempty"`
	// API is what a run of the named model would speak: the generative API
	// found (detectAPI), or "" for tensors (KServe v2 infer).
	API genai.API `json:"api,omitempty"`
	// InferenceLatencyMs is one timed inference of a synthetic sample, from
	// an already open connection (0 when no model was named).
	InferenceLatencyMs float64 `json:"inference_latency_ms,omitempty"`
	InferenceError     string  `json:"inference_error,omitempty"`
}

// ProbeEndpoint checks the endpoint at url: health, server metadata, and when model is
// named its metadata, configuration and one timed inference, every request
// with headers. An error means the endpoint could not be asked at all (bad
// URL, unreachable, refused, no model); a failed inference is reported in
// the result.
func ProbeEndpoint(ctx context.Context, url, model, version string, tlsCfg *tls.Config, headers ...Header) (*EndpointReport, error) {
	// The server's answers are quoted in the errors: scrubbed of the
	// headers' values, as a run's are (scrubbing).
	_, scr := scrubbing(Spec{Headers: headers}, Options{})
	rep, err := probeEndpoint(ctx, url, model, version, tlsCfg, headers)
	if rep != nil && scr != nil {
		scrubReport(rep, scr)
	}
	return rep, scr.Error(err)
}

// scrubReport scrubs what the server said of itself in words a person
// reads (its name, version and extensions, the model's name, platform and
// versions) and the inference's error. The tensors' names and the model's
// configuration are left: a run sends them back as they are.
func scrubReport(rep *EndpointReport, scr *secret.Scrubber) {
	rep.InferenceError = scr.String(rep.InferenceError)
	server := func(m *kserve.ServerMetadata) {
		m.Name, m.Version = scr.String(m.Name), scr.String(m.Version)
		m.Extensions = scrubAll(scr, m.Extensions)
	}
	server(&rep.Server)
	rep.Extensions = scrubAll(scr, rep.Extensions)
	if rep.Models != nil {
		models := make([]triton.RepositoryModel, len(rep.Models))
		for i, m := range rep.Models {
			models[i] = triton.RepositoryModel{Name: scr.String(m.Name), Version: scr.String(m.Version), State: scr.String(m.State), Reason: scr.String(m.Reason)}
		}
		rep.Models = models
	}
	if p := rep.Model; p != nil {
		server(&p.Server)
		p.Model.Name, p.Model.Platform = scr.String(p.Model.Name), scr.String(p.Model.Platform)
		p.Model.Versions = scrubAll(scr, p.Model.Versions)
	}
}

// scrubAll is ss scrubbed, in a new slice (the report's slices may be
// shared with the probe's).
func scrubAll(scr *secret.Scrubber, ss []string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = scr.String(s)
	}
	return out
}

func probeEndpoint(ctx context.Context, url, model, version string, tlsCfg *tls.Config, headers []Header) (*EndpointReport, error) {
	t, err := target.Parse(url)
	if err != nil {
		return nil, err
	}
	tlsCfg, err = tlsConfig(t, tlsCfg)
	if err != nil {
		return nil, err
	}
	conn, err := connect(ctx, t, 2, true, sent(headers), tlsCfg, 0)
	if err != nil {
		return nil, err
	}
	defer conn.probe.Close()
	rep := &EndpointReport{Target: t.URL}
	if model != "" {
		if rep.Model, err = probe(ctx, conn.probe, t, model, version, tlsCfg); err != nil {
			return nil, err
		}
		rep.Live, rep.Ready, rep.Server = true, true, rep.Model.Server
	} else {
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if rep.Live, err = conn.probe.ServerLive(pctx); err != nil {
			if rerr := refusal(t, err); rerr != nil {
				return nil, rerr
			}
			return nil, fmt.Errorf("%w: %s is not reachable as a KServe v2 server: %v", target.ErrTarget, t.URL, err)
		}
		if r, ok := conn.probe.(interface {
			ServerReady(context.Context) (bool, error)
		}); ok {
			rep.Ready, _ = r.ServerReady(pctx)
		}
		if rep.Server, err = conn.probe.ServerMetadata(pctx); err != nil {
			if rerr := redirected(t, err); rerr != nil {
				return nil, rerr
			}
			return nil, fmt.Errorf("%w: %s server metadata: %v", target.ErrTarget, t.URL, err)
		}
	}
	rep.Extensions = rep.Server.Extensions
	if rep.Extensions == nil {
		rep.Extensions = []string{}
	}
	rep.Models = listedModels(ctx, conn.probe, rep.Extensions)
	if rep.Model == nil {
		return rep, nil
	}
	rep.API = detectAPI(rep.Model, t)
	lib, err := qsl.NewSynthetic(rep.Model.Model, qsl.SyntheticOptions{Batched: rep.Model.Batched, Total: 1, Performance: 1})
	if err != nil {
		rep.InferenceError = err.Error()
		return rep, nil
	}
	if err := lib.Load(ctx, []int{0}); err != nil {
		rep.InferenceError = err.Error()
		return rep, nil
	}
	n, err := sut.New(conn.sut, lib, sut.Options{Model: model, Version: version, MaxBatch: rep.Model.MaxBatch, Expect: rep.Model.Expect(model)})
	if err != nil {
		rep.InferenceError = err.Error()
		return rep, nil
	}
	defer n.Close()
	lat, err := n.TimeOne(ctx, 0)
	if err != nil {
		rep.InferenceError = err.Error()
		return rep, nil
	}
	rep.InferenceLatencyMs = float64(lat.Microseconds()) / 1000
	return rep, nil
}

// MaxListedModels bounds the models a probe reports: a repository of
// thousands would make the answer the console shows unreadable and large.
const MaxListedModels = 1000

// listedModels is the server's repository index where it lists one, cut
// at MaxListedModels; nil where it lists none or the list fails (the
// probe's other answers stand without it).
func listedModels(ctx context.Context, c any, extensions []string) []triton.RepositoryModel {
	ix, ok := c.(repositoryIndexer)
	if !ok || !slices.Contains(extensions, kserve.ExtModelRepository) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	index, err := ix.RepositoryIndex(ctx)
	if err != nil {
		return nil
	}
	return index[:min(len(index), MaxListedModels)]
}
