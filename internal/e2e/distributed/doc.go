// Package distributed holds the acceptance tests of distributed runs
// (issue 29): the built loadgend as a coordinator (`loadgend serve`) and
// as workers (`loadgend worker`), the built sutproxy as the target, and
// `loadgend run --coordinator URL --workers N` as a user types it. What
// they check is what the Acceptance section says, through the
// contract it spells out (flags, spec fields, result.json workers[], the
// --samples-out export's worker), so that a change behind that contract
// cannot pass unnoticed. The package has no code of its own; its tests
// are the point.
package distributed
