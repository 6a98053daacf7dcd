// Package api is loadgend's control-API contract: the route set, the request
// and response types that mirror openapi.yaml (the source of truth), and the
// strict decoder that turns a run spec into engine settings exactly as
// `loadgend run` does for the same flags.
//
// The HTTP server lives elsewhere (pkg/daemon); it registers Routes and
// answers with these types, so a test can hold the code and the spec to the
// same list.
package api
