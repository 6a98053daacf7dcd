package server

// The KServe v2 REST server: every route of PROTOCOL.md §1 plus Triton's
// stats and config, on fasthttp, answering from a Backend.

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
	"google.golang.org/grpc/codes"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/triton"
)

// Route names passed to an HTTPObserver.
const (
	RouteServerLive     = "server_live"
	RouteServerReady    = "server_ready"
	RouteServerMetadata = "server_metadata"
	RouteModelMetadata  = "model_metadata"
	RouteModelReady     = "model_ready"
	RouteInfer          = "infer"
	RouteModelConfig    = "model_config"
	RouteModelStats     = "model_stats"
	RouteRepoIndex      = "repository_index"
	RouteOther          = "other" // unknown paths and the fallback handler
)

// HTTPObserver is told of every answered request: its route, the model ("" if
// none), the HTTP status and the time spent in the handler. It lets the
// embedding program count requests without this package knowing Prometheus.
type HTTPObserver func(route, model string, status int, d time.Duration)

// HTTPHandler serves the REST protocol from a Backend.
type HTTPHandler struct {
	backend  Backend
	fallback fasthttp.RequestHandler
	observe  HTTPObserver
	emit     EmitFunc
	bufs     sync.Pool     // *[]byte response buffers
	genSeq   atomic.Uint64 // OpenAI answers' ids
}

// HTTPHandlerOption configures an HTTPHandler.
type HTTPHandlerOption func(*HTTPHandler)

// WithFallback serves paths that are not the protocol's (e.g. /metrics)
// with h instead of answering 404.
func WithFallback(h fasthttp.RequestHandler) HTTPHandlerOption {
	return func(s *HTTPHandler) { s.fallback = h }
}

// WithObserver reports every request to o.
func WithObserver(o HTTPObserver) HTTPHandlerOption {
	return func(s *HTTPHandler) { s.observe = o }
}

// NewHTTPHandler builds a handler over b.
func NewHTTPHandler(b Backend, opts ...HTTPHandlerOption) *HTTPHandler {
	h := &HTTPHandler{backend: b}
	for _, o := range opts {
		o(h)
	}
	return h
}

// ServeFastHTTP answers one request; use it as a fasthttp.RequestHandler.
func (h *HTTPHandler) ServeFastHTTP(ctx *fasthttp.RequestCtx) {
	start := time.Now()
	route, model := h.route(ctx)
	if h.observe != nil {
		h.observe(route, model, ctx.Response.StatusCode(), time.Since(start))
	}
}

// route dispatches by path and returns the route and model for the observer.
func (h *HTTPHandler) route(ctx *fasthttp.RequestCtx) (route, model string) {
	path := string(ctx.Path())
	if route, model, ok := h.openAIRoute(ctx, path); ok {
		return route, model
	}
	rest, ok := strings.CutPrefix(path, "/v2")
	if !ok || (rest != "" && rest[0] != '/') {
		return h.other(ctx)
	}
	switch rest {
	case "", "/":
		if h.method(ctx, "GET") {
			httpWriteJSON(ctx, fasthttp.StatusOK, h.backend.ServerMetadata(backendContext(ctx)))
		}
		return RouteServerMetadata, ""
	case "/health/live":
		if h.method(ctx, "GET") {
			httpHealth(ctx, h.backend.ServerLive(backendContext(ctx)))
		}
		return RouteServerLive, ""
	case "/health/ready":
		if h.method(ctx, "GET") {
			httpHealth(ctx, h.backend.ServerReady(backendContext(ctx)))
		}
		return RouteServerReady, ""
	case "/models/stats":
		if h.method(ctx, "GET") {
			h.stats(ctx, "", "")
		}
		return RouteModelStats, ""
	case "/repository/index":
		return h.repositoryIndex(ctx)
	}
	rest, ok = strings.CutPrefix(rest, "/models/")
	if !ok {
		return h.other(ctx)
	}
	// {model}[/versions/{version}][/ready|/infer|/stats|/config]
	parts := strings.Split(rest, "/")
	model, version, action := parts[0], "", ""
	switch {
	case len(parts) == 1:
	case len(parts) == 2:
		action = parts[1]
	case len(parts) == 3 && parts[1] == "versions":
		version = parts[2]
	case len(parts) == 4 && parts[1] == "versions":
		version, action = parts[2], parts[3]
	default:
		return h.other(ctx)
	}
	if model == "" || (len(parts) > 2 && version == "") {
		return h.other(ctx)
	}
	switch action {
	case "":
		if h.method(ctx, "GET") {
			md, err := h.backend.ModelMetadata(backendContext(ctx), model, version)
			httpAnswer(ctx, md, err)
		}
		return RouteModelMetadata, model
	case "ready":
		if h.method(ctx, "GET") {
			ready, err := h.backend.ModelReady(backendContext(ctx), model, version)
			if err != nil {
				httpWriteError(ctx, err)
			} else {
				httpHealth(ctx, ready)
			}
		}
		return RouteModelReady, model
	case "infer":
		if h.method(ctx, "POST") {
			h.infer(ctx, model, version)
		}
		return RouteInfer, model
	case "config":
		if h.method(ctx, "GET") {
			cfg, err := h.backend.ModelConfig(backendContext(ctx), model, version)
			httpAnswer(ctx, cfg, err)
		}
		return RouteModelConfig, model
	case "stats":
		if h.method(ctx, "GET") {
			h.stats(ctx, model, version)
		}
		return RouteModelStats, model
	case "generate", "generate_stream":
		return h.generateRoute(ctx, model, version, action == "generate_stream"), model
	}
	return h.other(ctx)
}

func (h *HTTPHandler) other(ctx *fasthttp.RequestCtx) (string, string) {
	if h.fallback != nil {
		h.fallback(ctx)
	} else {
		httpWriteError(ctx, kserve.Errorf(codes.NotFound, "no route for %s %s", ctx.Method(), ctx.Path()))
	}
	return RouteOther, ""
}

// RepositoryIndexer is a Backend that lists its models, as Triton's
// repository index (POST /v2/repository/index; the model_repository
// extension). The HTTP handler serves the index for one; there is no such
// call in KServe v2's gRPC service.
type RepositoryIndexer interface {
	RepositoryIndex(ctx context.Context) []triton.RepositoryModel
}

func (h *HTTPHandler) repositoryIndex(ctx *fasthttp.RequestCtx) (string, string) {
	ix, ok := h.backend.(RepositoryIndexer)
	if !ok {
		return h.other(ctx)
	}
	if h.method(ctx, "POST") {
		httpWriteJSON(ctx, fasthttp.StatusOK, ix.RepositoryIndex(backendContext(ctx)))
	}
	return RouteRepoIndex, ""
}

// method answers 405 unless the request uses want.
func (h *HTTPHandler) method(ctx *fasthttp.RequestCtx, want string) bool {
	if string(ctx.Method()) == want {
		return true
	}
	ctx.Response.Header.Set("Allow", want)
	httpWriteErrorStatus(ctx, fasthttp.StatusMethodNotAllowed, "method "+string(ctx.Method())+" not allowed; use "+want)
	return false
}

func (h *HTTPHandler) stats(ctx *fasthttp.RequestCtx, model, version string) {
	st, err := h.backend.ModelStatistics(backendContext(ctx), model, version)
	httpAnswer(ctx, st, err)
}

// infer decodes JSON or binary bodies; a raw body (Inference-Header-Content-Length: 0)
// is the data of the model's single input, shaped from its metadata.
func (h *HTTPHandler) infer(ctx *fasthttp.RequestCtx, model, version string) {
	jsonLen, err := kserve.ParseInferenceHeaderLength(ctx.Request.Header.Peek(kserve.HeaderInferenceContentLength))
	if err != nil {
		httpWriteError(ctx, err)
		return
	}
	body := ctx.PostBody()
	req, err := kserve.DecodeInferRequest(body, jsonLen)
	if errors.Is(err, kserve.ErrRawBody) {
		req, err = h.rawRequest(backendContext(ctx), model, version, body)
	}
	if err != nil {
		// An unknown model is a 404 whatever the body, as Triton answers;
		// asked only on this error path so good requests pay nothing.
		if _, merr := h.backend.ModelReady(backendContext(ctx), model, version); errors.Is(merr, kserve.ErrNotFound) {
			err = merr
		}
		httpWriteError(ctx, err)
		return
	}
	req.Model, req.Version = model, version
	resp, err := h.backend.Infer(backendContext(ctx), req)
	if err != nil {
		httpWriteError(ctx, err)
		return
	}
	if resp.ID == "" {
		resp.ID = req.ID
	}
	if resp.Model == "" {
		resp.Model = model
	}
	bp, _ := h.bufs.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	defer h.bufs.Put(bp)
	out, n, err := kserve.EncodeInferResponse((*bp)[:0], resp, kserve.BinaryOutputs(req, resp))
	*bp = out
	if err != nil {
		httpWriteError(ctx, kserve.Errorf(codes.Internal, "encode response: %v", err))
		return
	}
	if n >= 0 {
		ctx.Response.Header.Set(kserve.HeaderInferenceContentLength, strconv.Itoa(n))
		ctx.SetContentType("application/octet-stream")
	} else {
		ctx.SetContentType("application/json")
	}
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetBody(out) // copies, so the buffer can go back to the pool
}

// rawRequest decodes a raw body; its response goes binary, since a client
// that sends no JSON is not expected to read JSON tensors either.
func (h *HTTPHandler) rawRequest(ctx context.Context, model, version string, body []byte) (*kserve.InferRequest, error) {
	md, err := h.backend.ModelMetadata(ctx, model, version)
	if err != nil {
		return nil, err
	}
	if len(md.Inputs) != 1 {
		return nil, kserve.Errorf(codes.InvalidArgument, "raw binary request (%s: 0) needs a single-input model; %q has %d inputs",
			kserve.HeaderInferenceContentLength, model, len(md.Inputs))
	}
	req, err := kserve.DecodeRawInferRequest(body, md.Inputs[0])
	if err != nil {
		return nil, err
	}
	req.Parameters = kserve.Parameters{kserve.ParamBinaryDataOutput: true}
	return req, nil
}

// backendContext is the context a Backend gets for ctx's request: ctx, with
// its Done channel read here, on the handler's goroutine. fasthttp's
// RequestCtx.Done reads a field of the server unguarded, which Shutdown
// writes once the connections have drained (valyala/fasthttp#2402, fixed
// past the version go.mod pins). context.WithCancel and context.AfterFunc,
// which the gRPC and HTTP clients call on the contexts they are given, start
// a goroutine that calls Done on a parent of a type they do not know; nothing
// orders that read before Shutdown's write, a data race whenever the
// forwarding front (pkg/forward) calls an upstream.
func backendContext(ctx *fasthttp.RequestCtx) context.Context {
	return requestContext{ctx, ctx.Done()}
}

// requestContext answers Done and Err from the channel read once, as
// RequestCtx does from the server's field; Deadline and Value are ctx's.
type requestContext struct {
	context.Context
	done <-chan struct{}
}

func (c requestContext) Done() <-chan struct{} { return c.done }

func (c requestContext) Err() error {
	select {
	case <-c.done:
		return context.Canceled
	default:
		return nil
	}
}

// health answers Triton's way: 200 with an empty body, 400 when not live or
// ready. Clients decide by status, and Triton's clients expect these codes.
func httpHealth(ctx *fasthttp.RequestCtx, ok bool) {
	if ok {
		ctx.SetStatusCode(fasthttp.StatusOK)
	} else {
		ctx.SetStatusCode(fasthttp.StatusBadRequest)
	}
}

func httpAnswer(ctx *fasthttp.RequestCtx, v any, err error) {
	if err != nil {
		httpWriteError(ctx, err)
		return
	}
	httpWriteJSON(ctx, fasthttp.StatusOK, v)
}

func httpWriteJSON(ctx *fasthttp.RequestCtx, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		httpWriteErrorStatus(ctx, fasthttp.StatusInternalServerError, "encode answer: "+err.Error())
		return
	}
	ctx.SetContentType("application/json")
	ctx.SetStatusCode(status)
	ctx.SetBody(b)
}

// writeError answers err as {"error": "..."}: an *kserve.Error with its
// status, a codec error (kserve.ErrMalformed) with 400, anything else 500.
func httpWriteError(ctx *fasthttp.RequestCtx, err error) {
	var ke *kserve.Error
	switch {
	case errors.As(err, &ke):
		httpWriteErrorStatus(ctx, kserve.HTTPStatus(ke.Code), ke.Message)
	case errors.Is(err, kserve.ErrMalformed):
		httpWriteErrorStatus(ctx, fasthttp.StatusBadRequest, err.Error())
	default:
		httpWriteErrorStatus(ctx, fasthttp.StatusInternalServerError, err.Error())
	}
}

func httpWriteErrorStatus(ctx *fasthttp.RequestCtx, status int, msg string) {
	b, _ := json.Marshal(struct {
		Error string `json:"error"`
	}{msg})
	ctx.Response.Header.Del(kserve.HeaderInferenceContentLength)
	ctx.SetContentType("application/json")
	ctx.SetStatusCode(status)
	ctx.SetBody(b)
}
