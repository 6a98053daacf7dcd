// Package dashboards holds no code: its directory holds the Grafana
// dashboard over loadgend's metrics (loadgend.json), and its tests check
// that the dashboard is well formed and that every query in it returns data
// from a real Prometheus scraping a loadgend that is running a scenario.
package dashboards
