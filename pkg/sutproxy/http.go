package sutproxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"

	"github.com/netloadgen/netloadgen/kserve/server"
)

func newHTTPServer(b server.Backend, reg *prometheus.Registry, m *metrics, maxBodyBytes int, emit server.EmitFunc) *fasthttp.Server {
	metricsHandler := fasthttpadaptor.NewFastHTTPHandler(promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		EnableOpenMetrics: true,
	}))
	kserveHandler := server.NewHTTPHandler(b, server.WithObserver(m.observeHTTP), server.WithEmit(emit))
	return &fasthttp.Server{
		Handler: func(ctx *fasthttp.RequestCtx) {
			if string(ctx.Path()) == "/metrics" {
				metricsHandler(ctx)
				return
			}
			setHTTPArrival(ctx)
			kserveHandler.ServeFastHTTP(ctx)
		},
		Name:                          "sutproxy",
		MaxRequestBodySize:            maxBodyBytes,
		ErrorHandler:                  requestErrorHandler(maxBodyBytes),
		NoDefaultServerHeader:         true,
		DisableHeaderNamesNormalizing: false,
		CloseOnShutdown:               true,
	}
}

// requestErrorHandler answers a request fasthttp could not read: 413 for a
// body over the cap (fasthttp's own handler says 400), its usual statuses
// otherwise, each with a KServe error body.
func requestErrorHandler(maxBodyBytes int) func(*fasthttp.RequestCtx, error) {
	return func(ctx *fasthttp.RequestCtx, err error) {
		status, msg := fasthttp.StatusBadRequest, "error when parsing request"
		var small *fasthttp.ErrSmallBuffer
		var netErr *net.OpError
		switch {
		case errors.Is(err, fasthttp.ErrBodyTooLarge):
			status, msg = fasthttp.StatusRequestEntityTooLarge, fmt.Sprintf("request body over sutproxy's limit of %d bytes (--max-request-bytes)", maxBodyBytes)
		case errors.As(err, &small):
			status, msg = fasthttp.StatusRequestHeaderFieldsTooLarge, "request header too large"
		case errors.As(err, &netErr) && netErr.Timeout():
			status, msg = fasthttp.StatusRequestTimeout, "request timeout"
		}
		b, _ := json.Marshal(map[string]string{"error": msg})
		ctx.SetStatusCode(status)
		ctx.SetContentType("application/json")
		ctx.SetBody(b)
	}
}
