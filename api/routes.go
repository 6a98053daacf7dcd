package api

// Route is one operation of the control API. Path uses openapi.yaml's
// template syntax, which is also net/http.ServeMux's wildcard syntax.
type Route struct {
	Method string
	Path   string
}

// Pattern is the route as a Go 1.22 ServeMux pattern ("GET /v1/runs/{id}").
func (r Route) Pattern() string { return r.Method + " " + r.Path }

// Routes is every operation openapi.yaml defines, no more and no fewer
// (TestOpenAPIRoutes holds the two together). Treat it as read-only.
var Routes = []Route{
	{"POST", "/v1/runs"},
	{"GET", "/v1/runs"},
	{"POST", "/v1/runs/check"},
	{"GET", "/v1/runs/{id}"},
	{"GET", "/v1/runs/{id}/result"},
	{"GET", "/v1/runs/{id}/files/{name}"},
	{"GET", "/v1/runs/{id}/trials/{trial}/files/{name}"},
	{"GET", "/v1/runs/{id}/report.html"},
	{"GET", "/v1/runs/{id}/samples.jsonl"},
	{"POST", "/v1/runs/{id}/cancel"},
	{"GET", "/v1/runs/{id}/events"},
	{"POST", "/v1/probe"},
	{"GET", "/v1/version"},
	{"POST", "/v1/workers"},
	{"GET", "/v1/workers"},
	{"POST", "/v1/workers/{name}/heartbeat"},
	{"GET", "/v1/workers/{name}/work"},
	{"POST", "/v1/workers/{name}/clock"},
	{"POST", "/v1/workers/{name}/runs/{id}/ready"},
	{"POST", "/v1/workers/{name}/runs/{id}/records"},
	{"GET", "/healthz"},
	{"GET", "/readyz"},
	{"GET", "/metrics"},
}
