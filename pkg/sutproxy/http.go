package sutproxy

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"

	"github.com/netloadgen/netloadgen/kserve/server"
)

// maxBodyBytes bounds one request body: large enough for a batch of images,
// small enough that a bad client cannot make the proxy buffer gigabytes.
const maxBodyBytes = 256 << 20

func newHTTPServer(b server.Backend, reg *prometheus.Registry, m *metrics) *fasthttp.Server {
	metricsHandler := fasthttpadaptor.NewFastHTTPHandler(promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		EnableOpenMetrics: true,
	}))
	kserveHandler := server.NewHTTPHandler(b, server.WithObserver(m.observeHTTP))
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
		NoDefaultServerHeader:         true,
		DisableHeaderNamesNormalizing: false,
		CloseOnShutdown:               true,
	}
}
