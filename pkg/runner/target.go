// Package runner carries out one run against a network target: parse and
// probe the target, build the sample library and the SUT adapter, run the
// engine, and write the run's files. `loadgend run` and the daemon both use
// it.
package runner

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/netloadgen/netloadgen/internal/suggest"
	"github.com/netloadgen/netloadgen/pkg/target"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/grpcclient"
	"github.com/netloadgen/netloadgen/kserve/httpclient"
	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/sut"
	"github.com/netloadgen/netloadgen/triton"
)

// probeClient is what a run asks of the endpoint before it starts.
type probeClient interface {
	ServerLive(ctx context.Context) (bool, error)
	ServerMetadata(ctx context.Context) (kserve.ServerMetadata, error)
	ModelMetadata(ctx context.Context, model, version string) (kserve.ModelMetadata, error)
	ModelReady(ctx context.Context, model, version string) (bool, error)
	ModelConfig(ctx context.Context, model, version string) (triton.ModelConfig, error)
	Close() error
}

// connection is an open client of either transport.
type connection struct {
	probe probeClient
	sut   sut.Client
	http  *httpclient.Client // the HTTP client; nil for gRPC
	grpc  *grpcclient.Client // the gRPC client; nil for HTTP
	// url and httpOpts make a generative run's HTTP client
	// (kserve/genclient) on the same terms as http: the target's URL,
	// connections, headers and TLS.
	url      string
	httpOpts []httpclient.Option
	// conns is the run's connection budget (the HTTP pool's size); a
	// generative gRPC run's Generator opens up to genConns of it.
	conns int
}

// connect builds the client of t's transport, which sends headers on every
// request (the probe's included); tlsCfg (nil for a plain-text target) is
// the run's TLS configuration; maxResp bounds an HTTP answer's body (0:
// the default).
func connect(ctx context.Context, t target.Target, conns int, binary bool, headers []kserve.Header, tlsCfg *tls.Config, maxResp int) (*connection, error) {
	switch t.Scheme {
	case "http", "https":
		opts := []httpclient.Option{httpclient.MaxConns(max(conns, 1)), httpclient.Headers(headers), httpclient.TLS(tlsCfg), httpclient.MaxResponseBytes(maxResp)}
		c, err := httpclient.New(t.URL, append(opts, httpclient.Binary(binary))...)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", target.ErrTarget, err)
		}
		return &connection{probe: c, sut: sut.HTTP(c), http: c, url: t.URL, httpOpts: opts, conns: conns}, nil
	case "grpc", "grpcs":
		n := min(max(conns/16, 1), 8)
		opts := []grpcclient.Option{grpcclient.WithConns(n), grpcclient.WithHeaders(headers)}
		if tlsCfg != nil {
			opts = append(opts, grpcclient.WithTLS(tlsCfg))
		}
		c, err := grpcclient.New(t.Host, opts...)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", target.ErrTarget, err)
		}
		return &connection{probe: c, sut: sut.GRPC(c), grpc: c, conns: conns}, nil
	}
	return nil, fmt.Errorf("%w: unknown scheme %q", target.ErrTarget, t.Scheme)
}

const (
	// unknownMaxBatch stands for "batches, limit not given": a MultiStream
	// query then goes as one request whatever its size.
	unknownMaxBatch = 1 << 20
	// unknownBatchSplit cuts Offline's query for such a model: the common
	// max_batch_size of served vision models.
	unknownBatchSplit = 8
)

// Probe is what the endpoint said about itself and the model.
type Probe struct {
	Server   kserve.ServerMetadata `json:"server"`
	Model    kserve.ModelMetadata  `json:"model"`
	Config   *triton.ModelConfig   `json:"config,omitempty"`
	MaxBatch int                   `json:"max_batch_size"`
	// Batched: the first dimension of the model's inputs is the batch.
	Batched bool `json:"batched"`
	// API is the generative API the run speaks (asked for, or found);
	// "": the model takes tensors.
	API genai.API `json:"api,omitempty"`
}

// Expect is the check of every answer of a run of model (the name it was
// asked by) against what the probe learnt: the outputs of its metadata, the
// first dimension the batch where it batches.
func (p *Probe) Expect(model string) *kserve.Expect {
	return kserve.NewExpect(model, p.Model.Outputs, p.Batched)
}

// probe asks the endpoint about itself and the model; tlsCfg is the run's
// TLS configuration (nil for a plain-text target).
func probe(ctx context.Context, c probeClient, t target.Target, model, version string, tlsCfg *tls.Config) (*Probe, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	// A connection of our own first tells a dead port from a live one that
	// speaks something else (the other transport, TLS, not KServe): the
	// clients' errors for the latter read like network failures.
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", t.Host)
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not reachable: %v", target.ErrTarget, t.URL, err)
	}
	if t.TLS() {
		err = checkHandshake(ctx, nc, t, tlsCfg)
	}
	nc.Close()
	if err != nil {
		return nil, err
	}
	live, err := c.ServerLive(ctx)
	if err != nil {
		if rerr := refusal(t, err); rerr != nil {
			return nil, rerr
		}
		if terr := tlsFailure(t, err, tlsCfg != nil && len(tlsCfg.Certificates) > 0); terr != nil {
			return nil, terr
		}
		if hint := tlsHint(ctx, t); hint != "" {
			return nil, fmt.Errorf("%w: %s does not answer as a KServe v2 %s server: %s", ErrTLS, t.URL, protocolName(t.Scheme), hint)
		}
		if hint := otherProtocolHint(ctx, t.Scheme, t.Host); hint != "" {
			// The client's error would quote the other protocol's bytes.
			return nil, fmt.Errorf("%w: %s does not answer as a KServe v2 %s server: %s", target.ErrTarget, t.URL, protocolName(t.Scheme), hint)
		}
		return nil, fmt.Errorf("%w: %s does not answer as a KServe v2 %s server: %v", target.ErrTarget, t.URL, protocolName(t.Scheme), err)
	}
	if !live {
		// Go's TLS server answers plain HTTP with a 400, which reads as
		// "not live" (Triton's way).
		if hint := tlsHint(ctx, t); hint != "" {
			return nil, fmt.Errorf("%w: %s does not answer as a KServe v2 %s server: %s", ErrTLS, t.URL, protocolName(t.Scheme), hint)
		}
		return nil, fmt.Errorf("%w: %s answers but says it is not live", target.ErrTarget, t.URL)
	}
	p := &Probe{}
	if p.Server, err = c.ServerMetadata(ctx); err != nil {
		if rerr := refusal(t, err); rerr != nil {
			return nil, rerr
		}
		return nil, fmt.Errorf("%w: %s server metadata: %v", target.ErrTarget, t.URL, err)
	}
	if p.Model, err = c.ModelMetadata(ctx, model, version); err != nil {
		if rerr := refusal(t, err); rerr != nil && !errors.Is(err, kserve.ErrNotFound) {
			return nil, rerr
		}
		if errors.Is(err, kserve.ErrNotFound) {
			return nil, fmt.Errorf("%w: %s has no model %q%s", target.ErrTarget, t.URL, model, modelHint(ctx, c, p.Server, model))
		}
		return nil, fmt.Errorf("%w: %s model metadata for %q: %v", target.ErrTarget, t.URL, model, err)
	}
	ready, err := c.ModelReady(ctx, model, version)
	if rerr := redirected(t, err); rerr != nil {
		return nil, rerr
	}
	if err != nil {
		return nil, fmt.Errorf("%w: model %q on %s: readiness: %v", target.ErrTarget, model, t.URL, err)
	}
	if !ready {
		return nil, fmt.Errorf("%w: model %q on %s is not ready", target.ErrTarget, model, t.URL)
	}
	// Only ask for the configuration where the server lists the extension:
	// KServe, Seldon and others do not implement it.
	for _, ext := range p.Server.Extensions {
		if ext == kserve.ExtModelConfiguration {
			if cfg, err := c.ModelConfig(ctx, model, version); err == nil {
				p.Config = &cfg
			}
		}
	}
	first := func() bool {
		for _, in := range p.Model.Inputs {
			if len(in.Shape) == 0 || in.Shape[0] != -1 {
				return false
			}
		}
		return len(p.Model.Inputs) > 0
	}()
	switch {
	case p.Config != nil:
		p.MaxBatch = int(p.Config.MaxBatchSize)
		p.Batched = p.MaxBatch > 0
	case first:
		// No configuration to ask: a leading -1 on every input is the
		// batch dimension by the protocol's convention, its limit unknown.
		p.Batched = true
		p.MaxBatch = unknownMaxBatch
	}
	return p, nil
}

// ErrRedirect marks a target that answered the probe with a redirect
// (3xx), which no client of a run follows. It wraps target.ErrTarget.
var ErrRedirect = fmt.Errorf("%w: redirect", target.ErrTarget)

// redirectError says where a target that redirects points, loc being the
// Location resolved against the request's URL.
func redirectError(t target.Target, loc string) error {
	return fmt.Errorf("%w: %s: the target redirects to %s: point --target there", ErrRedirect, t.URL, loc)
}

// refusal is the probe's error for an answer that redirected or refused
// its request, nil for any other error.
func refusal(t target.Target, err error) error {
	if rerr := redirected(t, err); rerr != nil {
		return rerr
	}
	if msg := refused(err, t.Scheme); msg != "" {
		return fmt.Errorf("%w: %s: %s", target.ErrTarget, t.URL, msg)
	}
	return nil
}

// redirected is redirectError for a probe request answered with a 3xx,
// nil for any other error.
func redirected(t target.Target, err error) error {
	ke, ok := errors.AsType[*kserve.Error](err)
	if !ok || ke.HTTPStatus < 300 || ke.HTTPStatus > 399 {
		return nil
	}
	return redirectError(t, ke.Location)
}

// refused says what a user can do about an answer that refused the
// request rather than failed it: credentials refused (401, 403,
// UNAUTHENTICATED, PERMISSION_DENIED), or no route (an ingress that routes
// by Host answers 404 for a host it does not know, which grpc-go reports as
// UNIMPLEMENTED). "" for any other error.
func refused(err error, scheme string) string {
	var ke *kserve.Error
	if !errors.As(err, &ke) {
		return ""
	}
	how := "gRPC " + codeName(ke.Code)
	if ke.HTTPStatus != 0 {
		how = fmt.Sprintf("HTTP %d", ke.HTTPStatus)
	}
	detail := ""
	if ke.Message != "" {
		detail = " (" + ke.Message + ")"
	}
	switch {
	case ke.Code == codes.Unauthenticated || ke.Code == codes.PermissionDenied:
		return fmt.Sprintf("the endpoint refused the credentials: %s%s: give them with --header 'Authorization: Bearer ...' (or the API key header it wants), or check the ones given", how, detail)
	case ke.HTTPStatus == 404 || (strings.HasPrefix(scheme, "grpc") && ke.Code == codes.Unimplemented):
		return fmt.Sprintf("no route: check the Host header (%s%s: an ingress routes by Host, set with --header 'Host: NAME'; or the target's path prefix)", how, detail)
	}
	return ""
}

// codeName is a gRPC code as the protocol spells it (UNAUTHENTICATED).
func codeName(c codes.Code) string {
	name := c.String() // "Unauthenticated", "PermissionDenied"
	var b strings.Builder
	for i, r := range name {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return strings.ToUpper(b.String())
}

func protocolName(scheme string) string {
	if scheme == "grpc" || scheme == "grpcs" {
		return "gRPC"
	}
	return "HTTP"
}

// repositoryIndexer lists a server's models: Triton's repository index
// (kserve/httpclient; KServe v2 itself has no list).
type repositoryIndexer interface {
	RepositoryIndex(ctx context.Context) ([]triton.RepositoryModel, error)
}

// modelHint follows "has no model": the nearest of the server's models and
// the list, where the server lists its models; else how to find them.
func modelHint(ctx context.Context, c probeClient, server kserve.ServerMetadata, model string) string {
	const unlisted = " (this server does not list its models: see its model repository, or on Triton POST /v2/repository/index)"
	listed := slices.Contains(server.Extensions, kserve.ExtModelRepository)
	ix, ok := c.(repositoryIndexer)
	if listed && !ok {
		// gRPC: KServe v2's service has no list; the server's HTTP port does.
		return " (its models are listed on its HTTP port: POST /v2/repository/index)"
	}
	if !listed {
		return unlisted
	}
	index, err := ix.RepositoryIndex(ctx)
	if err != nil || len(index) == 0 {
		return unlisted
	}
	var names []string
	for _, m := range index {
		if !slices.Contains(names, m.Name) {
			names = append(names, m.Name)
		}
	}
	shown := strings.Join(names[:min(len(names), 10)], ", ")
	if len(names) > 10 {
		shown += fmt.Sprintf(" and %d more", len(names)-10)
	}
	hint := " (it has " + shown + ")"
	if near := suggest.Nearest(model, names); near != "" {
		hint = ": did you mean " + near + "?" + hint
	}
	return hint
}
