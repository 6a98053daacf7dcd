package server

// This file serves generative models over HTTP: Triton's generate extension
// (POST /v2/models/{m}[/versions/{v}]/generate and /generate_stream) and
// the OpenAI-compatible API (POST .../v1/completions, .../v1/chat/completions,
// GET .../v1/models, under any path prefix, as KServe's front end mounts it
// under /openai). A streamed answer is server-sent events, one token per
// event, each flushed as the model produces it.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"
	"google.golang.org/grpc/codes"

	"github.com/netloadgen/netloadgen/kserve"
)

// Route names of the generative requests, for an HTTPObserver.
const (
	RouteGenerate          = "generate"
	RouteGenerateStream    = "generate_stream"
	RouteOpenAICompletions = "openai_completions"
	RouteOpenAIChat        = "openai_chat"
	RouteOpenAIModels      = "openai_models"
)

// HeaderRequestID carries an OpenAI request's id (vLLM and most gateways
// read it): the id a client can match sutproxy's emission record by.
const HeaderRequestID = "X-Request-Id"

// WithEmit reports every generated token sent (nil: none).
func WithEmit(f EmitFunc) HTTPHandlerOption {
	return func(s *HTTPHandler) { s.emit = f }
}

// genCall is one generative request as its front end parsed it.
type genCall struct {
	req    GenRequest
	stream bool
	// streamOptions: the OpenAI request carried stream_options.
	streamOptions bool
	format        genFormat
	openai        bool   // errors in OpenAI's shape
	emitID        string // the id emissions carry
	// wire records the streamed tokens at the socket write (nil: at the
	// hand-over)
	wire *EmitConn
}

// openAIRoute serves the OpenAI paths (any prefix before /v1/...) when the
// backend is a Generator; ok false leaves the path to the KServe routes.
func (h *HTTPHandler) openAIRoute(ctx *fasthttp.RequestCtx, path string) (route, model string, ok bool) {
	g, isGen := h.backend.(Generator)
	if !isGen {
		return "", "", false
	}
	switch {
	case strings.HasSuffix(path, "/v1/chat/completions"):
		if h.method(ctx, "POST") {
			model = h.openAI(ctx, g, true)
		}
		return RouteOpenAIChat, model, true
	case strings.HasSuffix(path, "/v1/completions"):
		if h.method(ctx, "POST") {
			model = h.openAI(ctx, g, false)
		}
		return RouteOpenAICompletions, model, true
	case strings.HasSuffix(path, "/v1/models"):
		if h.method(ctx, "GET") {
			openAIModels(ctx, g)
		}
		return RouteOpenAIModels, "", true
	}
	return "", "", false
}

// generateRoute serves Triton's generate and generate_stream.
func (h *HTTPHandler) generateRoute(ctx *fasthttp.RequestCtx, model, version string, stream bool) string {
	route := RouteGenerate
	if stream {
		route = RouteGenerateStream
	}
	g, ok := h.backend.(Generator)
	if !ok {
		httpWriteError(ctx, kserve.Errorf(codes.NotFound, "this server has no generative model (no generate extension)"))
		return route
	}
	if h.method(ctx, "POST") {
		h.tritonGenerate(ctx, g, model, version, stream)
	}
	return route
}

// tritonGenBody is a generate request: inputs by name at the top level,
// sampling parameters there or under "parameters".
type tritonGenBody struct {
	ID         string          `json:"id"`
	TextInput  json.RawMessage `json:"text_input"`
	MaxTokens  int             `json:"max_tokens"`
	IgnoreEOS  bool            `json:"ignore_eos"`
	MinTokens  int             `json:"min_tokens"`
	Parameters struct {
		MaxTokens int  `json:"max_tokens"`
		IgnoreEOS bool `json:"ignore_eos"`
		MinTokens int  `json:"min_tokens"`
	} `json:"parameters"`
}

func (h *HTTPHandler) tritonGenerate(ctx *fasthttp.RequestCtx, g Generator, model, version string, stream bool) {
	var body tritonGenBody
	if err := json.Unmarshal(ctx.PostBody(), &body); err != nil {
		httpWriteError(ctx, kserve.Errorf(codes.InvalidArgument, "generate request body: %v", err))
		return
	}
	text, err := promptText(body.TextInput)
	if err != nil {
		httpWriteError(ctx, kserve.Errorf(codes.InvalidArgument, "text_input: %v", err))
		return
	}
	emitID := body.ID
	if emitID == "" {
		emitID = "gen-" + strconv.FormatUint(h.genSeq.Add(1), 10)
	}
	c := &genCall{stream: stream, emitID: emitID, req: GenRequest{
		Model: model, Version: version, ID: body.ID, Prompt: text,
		MaxTokens: max(body.MaxTokens, body.Parameters.MaxTokens),
		IgnoreEOS: body.IgnoreEOS || body.Parameters.IgnoreEOS,
	}}
	c.req.IgnoreEOS = c.req.IgnoreEOS || minCovers(max(body.MinTokens, body.Parameters.MinTokens), c.req.MaxTokens)
	if version == "" {
		version = "1"
	}
	c.format = newTritonFormat(model, version, body.ID)
	h.serveGen(ctx, g, c)
}

// minCovers says whether min_tokens asks for the whole max_tokens.
func minCovers(minTokens, maxTokens int) bool { return maxTokens > 0 && minTokens >= maxTokens }

// promptText reads a prompt given as a string or a list of strings.
func promptText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", errors.New("missing: want a string")
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return "", errors.New("want a string or a list of strings")
	}
	return strings.Join(list, "\n"), nil
}

// openAIBody is a completions or chat completions request; the fields a
// simulated model does not use are ignored, as vLLM ignores unknown ones.
type openAIBody struct {
	Model    string          `json:"model"`
	Prompt   json.RawMessage `json:"prompt"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	MaxTokens           int  `json:"max_tokens"`
	MaxCompletionTokens int  `json:"max_completion_tokens"`
	Stream              bool `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	IgnoreEOS bool `json:"ignore_eos"`
	MinTokens int  `json:"min_tokens"`
}

// openAI serves completions (chat false) or chat completions.
func (h *HTTPHandler) openAI(ctx *fasthttp.RequestCtx, g Generator, chat bool) (model string) {
	var body openAIBody
	if err := json.Unmarshal(ctx.PostBody(), &body); err != nil {
		openAIError(ctx, kserve.Errorf(codes.InvalidArgument, "request body: %v", err))
		return ""
	}
	text, err := openAIPrompt(&body, chat)
	if err != nil {
		openAIError(ctx, err)
		return body.Model
	}
	model = body.Model
	if model == "" {
		if ms := g.GenerativeModels(backendContext(ctx)); len(ms) > 0 {
			model = ms[0]
		}
	}
	id := string(ctx.Request.Header.Peek(HeaderRequestID))
	respID := id
	if respID == "" {
		respID = strconv.FormatUint(h.genSeq.Add(1), 10)
	}
	if chat {
		respID = "chatcmpl-" + respID
	} else {
		respID = "cmpl-" + respID
	}
	c := &genCall{stream: body.Stream, openai: true, emitID: respID, req: GenRequest{
		Model: model, ID: id, Prompt: text,
		MaxTokens: max(body.MaxTokens, body.MaxCompletionTokens),
		IgnoreEOS: body.IgnoreEOS,
	}}
	if id != "" {
		c.emitID = id
		ctx.Response.Header.Set(HeaderRequestID, id)
	}
	c.req.IgnoreEOS = c.req.IgnoreEOS || minCovers(body.MinTokens, c.req.MaxTokens)
	c.streamOptions = body.StreamOptions != nil
	usage := c.streamOptions && body.StreamOptions.IncludeUsage
	c.format = newOpenAIFormat(chat, body.Stream, usage, respID, model, time.Now().Unix())
	h.serveGen(ctx, g, c)
	return model
}

// openAIPrompt is the request's prompt: completions' prompt (a string or
// a list of strings), or chat's message contents (strings, or lists of
// text parts) one per line.
func openAIPrompt(body *openAIBody, chat bool) (string, error) {
	if !chat {
		text, err := promptText(body.Prompt)
		if err != nil {
			return "", kserve.Errorf(codes.InvalidArgument, "prompt: %v", err)
		}
		return text, nil
	}
	if len(body.Messages) == 0 {
		return "", kserve.Errorf(codes.InvalidArgument, "messages: want at least one message")
	}
	parts := make([]string, 0, len(body.Messages))
	for i, m := range body.Messages {
		var s string
		if err := json.Unmarshal(m.Content, &s); err == nil {
			parts = append(parts, s)
			continue
		}
		var list []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(m.Content, &list); err != nil {
			return "", kserve.Errorf(codes.InvalidArgument, "messages[%d].content: want a string or a list of text parts", i)
		}
		for _, p := range list {
			parts = append(parts, p.Text)
		}
	}
	return strings.Join(parts, "\n"), nil
}

// openAIModels answers GET /v1/models with the generative models.
func openAIModels(ctx *fasthttp.RequestCtx, g Generator) {
	type entry struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	list := struct {
		Object string  `json:"object"`
		Data   []entry `json:"data"`
	}{Object: "list", Data: []entry{}}
	for _, m := range g.GenerativeModels(backendContext(ctx)) {
		list.Data = append(list.Data, entry{ID: m, Object: "model", OwnedBy: "sutproxy"})
	}
	httpWriteJSON(ctx, fasthttp.StatusOK, list)
}

// openAIError answers err in OpenAI's error shape.
func openAIError(ctx *fasthttp.RequestCtx, err error) {
	status, msg, typ := fasthttp.StatusInternalServerError, err.Error(), "InternalServerError"
	if ke, ok := errors.AsType[*kserve.Error](err); ok {
		status, msg = kserve.HTTPStatus(ke.Code), ke.Message
		switch ke.Code {
		case codes.NotFound:
			typ = "NotFoundError"
		case codes.InvalidArgument:
			typ = "BadRequestError"
		}
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": status}})
	ctx.SetContentType("application/json")
	ctx.SetStatusCode(status)
	ctx.SetBody(b)
}

func (c *genCall) writeError(ctx *fasthttp.RequestCtx, err error) {
	if c.openai {
		openAIError(ctx, err)
	} else {
		httpWriteError(ctx, err)
	}
}

// serveGen starts the request and answers it, streamed or whole.
func (h *HTTPHandler) serveGen(ctx *fasthttp.RequestCtx, g Generator, c *genCall) {
	st, err := g.Generate(backendContext(ctx), &c.req)
	if err != nil {
		c.writeError(ctx, err)
		return
	}
	if c.streamOptions && st.Fault() == FaultNoStreamOptions {
		st.Close()
		c.writeError(ctx, kserve.Errorf(codes.InvalidArgument, "stream_options: unknown field (this server does not take it)"))
		return
	}
	if !c.stream {
		h.genWhole(ctx, st, c)
		return
	}
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetContentType("text/event-stream")
	ctx.Response.Header.Set("Cache-Control", "no-cache")
	conn := ctx.Conn()
	if wire := h.wire(ctx); wire != nil {
		wire.beginSSE()
		c.wire = wire
	}
	ctx.SetBodyStreamWriter(func(w *bufio.Writer) { h.genSSE(w, conn, st, c) })
}

// wire is the connection that records the answer's tokens when their bytes
// are written, when emissions are recorded and it can (an EmitListener's
// connection, HTTP/1.1: a chunked or known-length body); else nil, and
// tokens are recorded when handed over.
func (h *HTTPHandler) wire(ctx *fasthttp.RequestCtx) *EmitConn {
	if h.emit == nil || !ctx.Request.Header.IsHTTP11() {
		return nil
	}
	wc, _ := ctx.Conn().(*EmitConn)
	if wc == nil || wc.sse == nil {
		return nil
	}
	return wc
}

// faultMessage is the error a fault error_mid gives.
const faultMessage = "sutproxy: simulated error in the middle of the answer (test fault error_mid)"

// genSSE writes the answer's events as its tokens come, each flushed: the
// emission time is when the bytes ending the token's event are written to
// the socket (c.wire), else when the flush handed it to the connection's
// writer.
func (h *HTTPHandler) genSSE(w *bufio.Writer, conn net.Conn, st GenStream, c *genCall) {
	defer st.Close()
	b := make([]byte, 0, 512)
	n := 0
	cut := false // fault no_final over generate_stream: cut at the next token
	for {
		tok, ok, err := st.Next(context.Background())
		if cut {
			// A step after the first token, which has long left: the
			// client sees the body end in the middle.
			_ = conn.Close()
			return
		}
		b = b[:0]
		switch {
		case err != nil:
			b = c.format.errorEvent(b, err.Error())
		case !ok:
			b = c.format.tail(b, genUsage{st.InputTokens(), n}, true)
		default:
			b = c.format.token(b, tok, tok.Index == 0)
		}
		if c.wire != nil {
			var e *Emission
			if ok && err == nil {
				e = &Emission{Model: c.req.Model, ID: c.emitID, Index: tok.Index, Last: tok.Last}
			}
			c.wire.queueSSE(b, e)
		}
		if _, werr := w.Write(b); werr != nil || w.Flush() != nil || !ok || err != nil {
			return // done, or the client left
		}
		n++
		if c.wire == nil {
			h.emitToken(c, tok)
		}
		if tok.Index == 0 && st.Fault() != "" {
			var stop bool
			if stop, cut = sseFault(w, c, st.Fault()); stop {
				return
			}
		}
	}
}

// sseFault gives a test-only malformed stream after the first token: stop
// ends the answer now; cut asks for the connection to be cut at the next
// token. Neither for a fault that does not apply over HTTP (unknown_id).
func sseFault(w *bufio.Writer, c *genCall, fault string) (stop, cut bool) {
	switch fault {
	case FaultBadFraming:
		// An event cut off: no blank line ends it before the body does.
		_, _ = w.WriteString(`data: {"cut off":`)
		_ = w.Flush()
	case FaultErrorMid:
		b := c.format.errorEvent(nil, faultMessage)
		if c.wire != nil {
			c.wire.queueSSE(b, nil)
		}
		_, _ = w.Write(b)
		_ = w.Flush()
	case FaultNoFinal:
		if _, triton := c.format.(*tritonFormat); triton {
			// generate_stream has no end marker but the body's end: cut
			// the connection instead of ending the body.
			return false, true
		}
	default:
		return false, false
	}
	return true, false
}

// genWhole waits for the whole answer and writes it as one body.
func (h *HTTPHandler) genWhole(ctx *fasthttp.RequestCtx, st GenStream, c *genCall) {
	defer st.Close()
	var text []byte
	var ids []int32
	var toks []GenToken
	reason := "length"
	for {
		tok, ok, err := st.Next(backendContext(ctx))
		if err != nil {
			c.writeError(ctx, err)
			return
		}
		if !ok {
			break
		}
		text, ids, toks = append(text, tok.Text...), append(ids, tok.ID), append(toks, tok)
		if tok.Last {
			reason = tok.Reason
		}
	}
	body := c.format.whole(text, ids, reason, genUsage{st.InputTokens(), len(ids)})
	switch st.Fault() {
	case FaultBadFraming:
		body = body[:len(body)/2]
	case FaultErrorMid:
		c.writeError(ctx, kserve.Errorf(codes.Internal, faultMessage))
		return
	case FaultNoFinal:
		ctx.HijackSetNoResponse(true) // the connection closes without an answer
		ctx.Hijack(func(net.Conn) {})
		return
	}
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetContentType("application/json")
	ctx.SetBody(body)
	if wire := h.wire(ctx); wire != nil {
		// Recorded at the body's last byte.
		ems := make([]Emission, len(toks))
		for i, tok := range toks {
			ems[i] = Emission{Model: c.req.Model, ID: c.emitID, Index: tok.Index, Last: tok.Last}
		}
		wire.wholeBody(len(body), ems)
		return
	}
	for _, tok := range toks {
		h.emitToken(c, tok)
	}
}

func (h *HTTPHandler) emitToken(c *genCall, tok GenToken) {
	if h.emit != nil {
		h.emit(Emission{Model: c.req.Model, ID: c.emitID, Index: tok.Index, Last: tok.Last, At: time.Now()})
	}
}
