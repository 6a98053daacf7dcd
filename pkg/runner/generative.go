package runner

// This file is the generative side of a run: which API the endpoint
// speaks (asked for, or found by the probe), the client of that API, and
// the prompts the run sends instead of tensors.

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/genclient"
	"github.com/netloadgen/netloadgen/kserve/grpcclient"
	"github.com/netloadgen/netloadgen/kserve/httpclient"
	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/grpcloop"
	"github.com/netloadgen/netloadgen/pkg/sut"
	"github.com/netloadgen/netloadgen/pkg/target"
)

// ErrAPI is an API that the target's transport does not carry, or that
// this build has no client for.
var ErrAPI = errors.New("api")

// CheckAPI refuses an API that t's transport does not carry: kserve-stream
// is gRPC, the others HTTP.
func CheckAPI(api genai.API, t target.Target) error {
	switch {
	case api == "":
	case api.GRPC() && !t.GRPC():
		return fmt.Errorf("%w: %s is gRPC ModelStreamInfer: the target must be grpc:// or grpcs://, not %s://", ErrAPI, api, t.Scheme)
	case !api.GRPC() && t.GRPC():
		return fmt.Errorf("%w: %s is an HTTP API: the target must be http:// or https://, not %s://", ErrAPI, api, t.Scheme)
	}
	return nil
}

// probeRun probes the target for a run: the KServe probe, except for an
// OpenAI API (an OpenAI server has no KServe metadata: GET /v1/models is
// its probe). With no API asked for, an HTTP target that does not answer
// as KServe but lists models at /v1/models is an OpenAI chat endpoint, and
// a KServe one serving an LLM (see detectAPI) is generative; Probe.API says
// which ("": tensors).
func probeRun(ctx context.Context, c probeClient, t target.Target, spec Spec, tlsCfg *tls.Config) (*Probe, error) {
	if err := CheckAPI(spec.API, t); err != nil {
		return nil, err
	}
	if spec.API == genai.APIOpenAIChat || spec.API == genai.APIOpenAICompletions {
		if err := probeOpenAI(ctx, t, spec, tlsCfg); err != nil {
			return nil, err
		}
		return &Probe{API: spec.API}, nil
	}
	pr, err := probe(ctx, c, t, spec.Model, spec.ModelVersion, tlsCfg)
	if err != nil {
		// A TLS failure is the port's, not the API's: asking /v1/models
		// over the same handshake would only wait out its own timeout.
		if spec.API == "" && !t.GRPC() && !errors.Is(err, ErrTLS) && probeOpenAI(ctx, t, spec, tlsCfg) == nil {
			return &Probe{API: genai.APIOpenAIChat}, nil
		}
		return nil, err
	}
	pr.API = spec.API
	if pr.API == "" {
		pr.API = detectAPI(pr, t)
	}
	return pr, nil
}

// detectAPI is the generative API of a KServe endpoint's model, "" for a
// tensor model: over gRPC a decoupled model, or one whose input is
// Triton's text_input, streams (ModelStreamInfer); over HTTP a text_input
// model of a server that lists the generate extension streams its answer
// (generate_stream).
func detectAPI(pr *Probe, t target.Target) genai.API {
	text := slices.ContainsFunc(pr.Model.Inputs, func(in kserve.TensorMetadata) bool { return in.Name == grpcclient.GenTextInput })
	decoupled := pr.Config != nil && pr.Config.ModelTransactionPolicy != nil && pr.Config.ModelTransactionPolicy.Decoupled
	switch {
	case t.GRPC() && (decoupled || text):
		return genai.APIKServeStream
	case !t.GRPC() && text && slices.Contains(pr.Server.Extensions, extGenerate):
		return genai.APIGenerateStream
	}
	return ""
}

// extGenerate is Triton's generate extension's name in server metadata.
const extGenerate = "generate"

// probeOpenAI asks GET {target}/v1/models, with the run's headers, and
// checks that the model is listed.
func probeOpenAI(ctx context.Context, t target.Target, spec Spec, tlsCfg *tls.Config) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	url := strings.TrimSuffix(t.URL, "/") + "/v1/models"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("%w: %v", target.ErrTarget, err)
	}
	for _, h := range spec.Headers {
		if strings.EqualFold(h.Name, kserve.HeaderHost) {
			req.Host = h.Value
			continue
		}
		req.Header.Set(h.Name, h.Value)
	}
	tr := &http.Transport{TLSClientConfig: tlsCfg}
	defer tr.CloseIdleConnections()
	resp, err := noRedirects(tr).Do(req)
	if err != nil {
		return fmt.Errorf("%w: %s: GET /v1/models: %v", target.ErrTarget, t.URL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		return redirectError(t, httpclient.ResolveLocation(url, resp.Header.Get("Location")))
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%w: %s: GET /v1/models: HTTP %d", target.ErrTarget, t.URL, resp.StatusCode)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(&list); err != nil {
		return fmt.Errorf("%w: %s: GET /v1/models is not an OpenAI model list: %v", target.ErrTarget, t.URL, err)
	}
	ids := make([]string, len(list.Data))
	for i, m := range list.Data {
		ids[i] = m.ID
	}
	if !slices.Contains(ids, spec.Model) {
		return fmt.Errorf("%w: %s has no model %q (GET /v1/models lists %s)", target.ErrTarget, t.URL, spec.Model, strings.Join(ids, ", "))
	}
	return nil
}

// noRedirects is a net/http client over tr that follows no redirect: a
// 3xx is the answer. Go's default follows up to ten, to any host, with
// every header of the run (Authorization too when only the port differs):
// the run's credentials would reach a server the user never named, and in
// the daemon a target outside LOADGEND_ALLOWED_TARGETS would be asked.
func noRedirects(tr http.RoundTripper) *http.Client {
	return &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// genClient is the client of the run's generative API; loop says it is
// grpcloop's Generator (ModelStreamInfer on its own frames), which a plain
// grpc:// target gets unless --grpc-client is grpc: grpc-go's receive path
// allocates about 4.6 times per token, the Generator's none.
func genClient(spec Spec, t target.Target, conn *connection, pr *Probe) (c genai.Client, loop bool, err error) {
	if pr.API == genai.APIKServeStream {
		if t.TLS() || spec.GRPCClient == sut.GRPCClientGRPC {
			return conn.grpc.NewGenerator(generateOptions(pr)), false, nil
		}
		g, err := grpcloop.NewGenerator(grpcloop.GenConfig{Addr: t.Host, Authority: conn.grpc.Authority(), Metadata: conn.grpc.Metadata(),
			Conns: genConns(conn.conns), Options: generateOptions(pr)})
		if err != nil {
			return nil, false, fmt.Errorf("gRPC client %q: %w", sut.GRPCClientLoop, err)
		}
		return g, true, nil
	}
	if conn.http == nil {
		return nil, false, fmt.Errorf("%w: %s is spoken over HTTP: give an http:// or https:// target", ErrAPI, pr.API)
	}
	// ignore_eos (min_tokens) makes an answer as long as asked. OpenAI-
	// compatible servers that serve LLMs take it (vLLM, TGI, KServe's
	// Hugging Face runtime); Triton's generate refuses inputs its model
	// lacks, so there only when the model declares it.
	ignoreEOS := pr.API == genai.APIOpenAICompletions || pr.API == genai.APIOpenAIChat || declares(pr, "ignore_eos")
	hc, err := genclient.New(conn.url, pr.API, genclient.Options{IgnoreEOS: ignoreEOS}, conn.httpOpts...)
	if err != nil {
		return nil, false, fmt.Errorf("%w: %v", ErrAPI, err)
	}
	return hc, false, nil
}

// genConns is how many connections grpcloop's Generator may open for a run
// whose connection budget is conns: one per request in flight, as the HTTP
// generative client has, so that the tokens of concurrent answers do not
// share a socket and its receive stamps (grpcloop's gen.go); at most 256,
// as HTTP/2 multiplexes what goes beyond.
func genConns(conns int) int { return min(max(conns, 1), 256) }

// declares says whether the probed model takes an input of that name.
func declares(pr *Probe, input string) bool {
	for _, in := range pr.Model.Inputs {
		if in.Name == input {
			return true
		}
	}
	if cfg := pr.Config; cfg != nil {
		for _, in := range cfg.Input {
			if in.Name == input {
				return true
			}
		}
	}
	return false
}

// generateOptions shape ModelStreamInfer requests to the probed model: its
// batch dimension, the inputs it declares, whether it is decoupled.
func generateOptions(pr *Probe) grpcclient.GenerateOptions {
	var o grpcclient.GenerateOptions
	if cfg := pr.Config; cfg != nil {
		o.Batched = cfg.MaxBatchSize > 0
		o.OneResponse = cfg.ModelTransactionPolicy == nil || !cfg.ModelTransactionPolicy.Decoupled
		for _, in := range cfg.Input {
			o.Inputs = append(o.Inputs, in.Name)
		}
		return o
	}
	if len(pr.Model.Inputs) > 0 {
		for _, in := range pr.Model.Inputs {
			o.Inputs = append(o.Inputs, in.Name)
		}
		o.Batched = pr.Batched
	}
	return o
}

// openGenerative builds a generative run's SUT and sample set; the bool
// says whether grpcloop's Generator sends (genClient).
func openGenerative(spec Spec, t target.Target, conn *connection, pr *Probe, name string, capture bool) (*sut.Adapter, promptSet, bool, error) {
	ps := spec.Prompts
	if ps == nil {
		// No prompt setting: the synthetic defaults (genai.DefaultInputTokens,
		// DefaultOutputTokens).
		var err error
		if ps, err = genai.NewSynthetic(genai.SyntheticOptions{Total: spec.TotalSamples, Performance: spec.PerformanceSamples, Seed: spec.DataSeed}); err != nil {
			return nil, nil, false, err
		}
	}
	client, loop, err := genClient(spec, t, conn, pr)
	if err != nil {
		return nil, nil, false, err
	}
	if spec.wrapGen != nil {
		client = spec.wrapGen(client)
	}
	stream := pr.API != genai.APIGenerate
	ad, err := sut.Open(sut.Config{Generative: &sut.GenerativeConfig{Client: client, Prompts: ps,
		Options: sut.GenerativeOptions{Model: spec.Model, Version: spec.ModelVersion, Stream: stream, Name: name,
			Timeout: spec.RequestTimeout, Capture: capture, Seed: spec.DataSeed}}})
	if err != nil {
		client.Close()
		return nil, nil, false, err
	}
	return ad, ps, loop, nil
}

// promptSet is a generative run's samples: the engine's QSL and the SUT's
// prompts.
type promptSet interface {
	sampleSet
	sut.Prompts
}
