// Package api is loadgend's control-API contract: the route set, the request
// and response types that mirror openapi.yaml (the source of truth), and the
// strict decoder with its field errors. It imports enums of the engine, never
// the runner: pkg/runspec turns a run spec into a run, for the daemon and
// for `loadgend run` alike.
//
// The HTTP server lives elsewhere (pkg/daemon); it registers Routes and
// answers with these types, so a test can hold the code and the spec to the
// same list.
package api
