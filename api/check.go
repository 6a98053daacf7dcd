package api

// RunCheck is the 200 answer to POST /v1/runs/check: the spec decoded and
// checked as POST /v1/runs would queue it, nothing queued.
type RunCheck struct {
	// Spec is the spec as POST /v1/runs would store it: the defaults the
	// decoding writes in (scenario), each header's literal value shown as
	// <redacted> (ShownHeaders), references as themselves.
	Spec RunSpec `json:"spec"`
	// CommandLine is the `loadgend run` command line that fills the same
	// spec, one argument an element ("loadgend", "run", "--target", ...);
	// Command the same, shell-quoted, on one line.
	CommandLine []string `json:"command_line"`
	Command     string   `json:"command"`
	// NotExpressible are the JSON paths of the spec's set fields that no
	// flag of `loadgend run` carries (LoadGen's own settings names, the
	// conf texts, tls.ca_pem, a header given literally), left out of the
	// command line; empty when the command line is exact.
	NotExpressible []string `json:"not_expressible"`
}
