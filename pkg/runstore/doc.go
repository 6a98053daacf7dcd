// Package runstore keeps loadgend's run history on disk, one directory per
// run, so that it survives a restart or a crash of the daemon.
//
// Layout under the data directory (LOADGEND_DATA_DIR):
//
//	<dir>/.lock               held (flock) while a Store is open
//	<dir>/runs/<id>/run.json  the run's Record
//	<dir>/runs/<id>/...       the files the run writes (LoadGen logs,
//	                          result.json, latency.hlog, progress.json)
//
// Every file is written atomically (temporary file in the same directory,
// fsync, rename, fsync of the directory), so after a crash a file is either
// its previous version or its new one, never a torn mix. Open recovers from
// a crash: a run that was running becomes interrupted with everything it had
// written kept, queued runs stay queued in their order, temporary files are
// removed, and a run.json that cannot be read is reported, never deleted.
// Once a run is in a terminal state the store refuses every write to it.
package runstore
