package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/apiclient"
	"github.com/netloadgen/netloadgen/pkg/atomicfile"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
)

// `loadgend run --coordinator URL`: the spec the flags fill is submitted to
// that daemon instead of run here, followed as a local run is, and its
// files fetched into --out.

// TokenEnv is the variable the daemon's API token is read from, as the
// daemon reads its own.
const TokenEnv = "LOADGEND_API_TOKEN"

// Timing of a remote run's following: a status every pollEvery; a daemon
// that answers nothing (or only 503) for lostAfter is lost; a cancel is
// given cancelWait for the daemon to accept it.
const (
	pollEvery  = 500 * time.Millisecond
	cancelWait = 10 * time.Second
)

// lostAfter: a variable so that a test need not wait a minute.
var lostAfter = 60 * time.Second

// remoteRequest is a run for a daemon: the spec as the flags filled it.
type remoteRequest struct {
	coordinator string
	spec        api.RunSpec
	out         string
	// explain turns a field error back into its flag.
	explain func(error) error
}

// distributedFlags are the flags of the spec's distributed fields: they
// mean something only for a daemon.
var distributedFlags = []string{"workers", "workers-wait-ms", "max-clock-uncertainty-ms", "worker-timeout-ms"}

// addRemoteFlags registers --coordinator and the distributed fields' flags.
func (f *runFlags) addRemoteFlags() {
	spec := &f.spec
	f.fs.StringVar(&f.coordinator, "coordinator", "", "submit the run to the loadgend daemon at this URL (http[s]://host:port; token from "+TokenEnv+") instead of running it here: it is followed, then its files are fetched into --out and its samples into --samples-out; --data, @env: and @file: then name the daemon's files and variables")
	f.integer(&spec.Workers, "workers", "workers", 0, "with --coordinator: run on N workers registered with that daemon (loadgend worker), query i on worker i mod N (0: on the daemon itself)")
	f.uint(&spec.WorkersWaitMs, "workers-wait-ms", "workers_wait_ms", "with --workers: how long the daemon waits for N idle workers (default 60000)")
	f.float(&spec.MaxClockUncertaintyMs, "max-clock-uncertainty-ms", "max_clock_uncertainty_ms", "with --workers: the largest clock-offset uncertainty a run starts with, in ms (default 1; fractions allowed)")
	f.uint(&spec.WorkerTimeoutMs, "worker-timeout-ms", "worker_timeout_ms", "with --workers: a worker silent this long is lost and the run INVALID (default 3000)")
}

// remote makes the request a daemon's when --coordinator is given, and
// refuses what needs one without it or makes no sense with it.
func (f *runFlags) remote(req *runRequest, spec api.RunSpec) (bool, error) {
	if f.coordinator == "" {
		for _, name := range distributedFlags {
			if f.set[name] {
				return false, fmt.Errorf("--%s: runs on workers registered with a daemon: give --coordinator URL too (--%s needs --coordinator)", name, name)
			}
		}
		return false, nil
	}
	if req.mode != modePerformance {
		return false, fmt.Errorf("--mode %s: not with --coordinator, which submits one performance run (submit a search to POST /v1/runs with a search block)", req.mode)
	}
	spec.KeepSamples = req.samplesOut != ""
	req.remote = &remoteRequest{coordinator: f.coordinator, spec: spec, out: f.out, explain: f.explain}
	return true, nil
}

// remoteRun is one run on a daemon, from its submission to its files.
type remoteRun struct {
	req     runRequest
	c       *apiclient.Client
	stderr  io.Writer
	out     string
	created bool // out is a new directory under ./runs
	// ctx ends at a second signal: every call to the daemon stops then.
	ctx  context.Context
	quit context.CancelFunc

	mu    sync.Mutex
	id    string    // once submitted
	first os.Signal // the first signal, once one came
}

// runRemote submits, follows and fetches a run; exit statuses as a local
// run's. The first signal cancels the run on the daemon, which drains and
// writes its files, fetched as a finished run's are; a second exits at once.
func runRemote(req runRequest, sigs <-chan os.Signal, stdout, stderr io.Writer) int {
	rq := req.remote
	c, err := apiclient.New(rq.coordinator, apiclient.Options{Token: os.Getenv(TokenEnv), Secrets: headerValues(rq.spec.Headers)})
	if err != nil {
		fmt.Fprintf(stderr, "loadgend run: --coordinator: %v\n", err)
		return exitError
	}
	defer c.Close()
	r := &remoteRun{req: req, c: c, stderr: &lockedWriter{w: stderr}, out: rq.out}
	if r.out == "" {
		dir, err := claimOutDir(defaultOutBase, time.Now(), rq.spec.Scenario, rq.spec.Model)
		if err != nil {
			fmt.Fprintf(stderr, "loadgend run: --out: %v\n", err)
			return exitError
		}
		r.out, r.created = dir, true
	} else if err := os.MkdirAll(r.out, 0o755); err != nil {
		fmt.Fprintf(stderr, "loadgend run: --out: %v\n", err)
		return exitError
	}
	r.ctx, r.quit = context.WithCancel(context.Background())
	defer r.quit()
	done := make(chan struct{})
	defer close(done)
	go r.watch(sigs, done)
	code := r.run(stdout)
	if first := r.signal(); first != nil {
		code = signalExit(first)
	}
	if r.created && code != exitValid && code != exitInvalid {
		_ = os.Remove(r.out) // empty unless files came
	}
	return code
}

// watch handles the signals: the first cancels the run on the daemon (or
// the submission under way), a second ends every call at once.
func (r *remoteRun) watch(sigs <-chan os.Signal, done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		case s := <-sigs:
			r.mu.Lock()
			first, id := r.first, r.id
			if first == nil {
				r.first = s
			}
			r.mu.Unlock()
			switch {
			case first != nil:
				fmt.Fprintf(r.stderr, "\nloadgend run: %v again: exiting now; run %s may still be draining on the daemon, its files not fetched\n", s, id)
				r.quit()
				return
			case id == "":
				fmt.Fprintf(r.stderr, "\nloadgend run: %v: submission abandoned\n", s)
				r.quit()
				return
			}
			go r.cancel(s, id) // a second signal is heard meanwhile
		}
	}
}

func (r *remoteRun) signal() os.Signal {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.first
}

func (r *remoteRun) run(stdout io.Writer) int {
	created, err := r.c.Submit(r.ctx, r.req.remote.spec)
	if err != nil {
		fmt.Fprintf(r.stderr, "loadgend run: %v\n", r.submitError(err))
		return exitError
	}
	r.mu.Lock()
	r.id = created.ID
	r.mu.Unlock()
	fmt.Fprintf(r.stderr, "loadgend run: run %s submitted to %s (%d ahead of it)\n", created.ID, r.c.Base(), created.QueuePosition)
	st, err := r.follow(created.ID)
	if err != nil {
		fmt.Fprintf(r.stderr, "loadgend run: following run %s: %v\n", created.ID, err)
		return exitError
	}
	fetchErr := r.fetch(created.ID, st)
	return r.finish(created.ID, st, fetchErr, stdout)
}

// submitError is a refused submission in the flags' words: the field the
// daemon names turned back into its flag.
func (r *remoteRun) submitError(err error) error {
	ae, ok := errors.AsType[*apiclient.APIError](err)
	if ok && ae.Status == 401 {
		return fmt.Errorf("%w (the token is read from %s)", err, TokenEnv)
	}
	if !ok || ae.Field == "" {
		return err
	}
	msg := strings.TrimPrefix(ae.Message, ae.Field+": ")
	return fmt.Errorf("%w (loadgend at %s answered %d)", r.req.remote.explain(&api.FieldError{Field: ae.Field, Message: msg}), r.c.Base(), ae.Status)
}

// follow polls the run until it ends, showing its progress on a terminal:
// its last status. A daemon that answers nothing, or only that it is busy,
// for lostAfter is lost.
func (r *remoteRun) follow(id string) (api.RunStatus, error) {
	var progress *remoteProgress
	if isTerminal(r.stderr) {
		progress = &remoteProgress{w: r.stderr}
	}
	defer progress.clear()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	lastOK := time.Now()
	for {
		st, err := r.c.Status(r.ctx, id)
		switch {
		case r.ctx.Err() != nil:
			return st, r.ctx.Err()
		case err == nil:
			lastOK = time.Now()
			if st.State.Terminal() {
				return st, nil
			}
			progress.show(st)
		case !transient(err) || time.Since(lastOK) >= lostAfter:
			return st, err
		}
		select {
		case <-tick.C:
		case <-r.ctx.Done():
			return st, r.ctx.Err()
		}
	}
}

// cancel asks the daemon to cancel the run, after the first signal.
func (r *remoteRun) cancel(sig os.Signal, id string) {
	ctx, stop := context.WithTimeout(r.ctx, cancelWait)
	defer stop()
	err := r.c.Cancel(ctx, id)
	if ae, ok := errors.AsType[*apiclient.APIError](err); ok && ae.Code == api.CodeAlreadyFinished {
		err = nil // it ended meanwhile: its files are fetched as usual
	}
	if err != nil {
		fmt.Fprintf(r.stderr, "\nloadgend run: %v: cancelling run %s on the daemon failed: %v; press Ctrl-C again to exit at once\n", sig, id, err)
		return
	}
	fmt.Fprintf(r.stderr, "\nloadgend run: %v: run %s cancelled on the daemon: it drains and writes its files, then they are fetched; press Ctrl-C again to exit at once\n", sig, id)
}

// transient errors are retried while following: no answer, or the
// daemon's API busy (503, 429).
func transient(err error) bool {
	if errors.Is(err, apiclient.ErrUnreachable) {
		return true
	}
	ae, ok := errors.AsType[*apiclient.APIError](err)
	return ok && (ae.Status == 503 || ae.Status == 429)
}

// fetch copies every file the ended run lists into --out, and its
// per-sample export into --samples-out.
func (r *remoteRun) fetch(id string, st api.RunStatus) error {
	var errs []error
	for _, name := range api.RunFiles() {
		if !slices.Contains(st.Files, name) {
			continue
		}
		err := atomicfile.Write(r.out, name, func(w io.Writer) error {
			_, err := r.c.File(r.ctx, id, name, w)
			return err
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("fetching %s: %w", name, err))
		}
	}
	if err := atomicfile.SyncDir(r.out); err != nil {
		errs = append(errs, err)
	}
	if r.req.samplesOut != "" && slices.Contains(st.Files, runlog.SamplesJSONLFile) {
		dir := filepath.Dir(r.req.samplesOut)
		err := atomicfile.Write(dir, filepath.Base(r.req.samplesOut), func(w io.Writer) error {
			_, err := r.c.Samples(r.ctx, id, w)
			return err
		})
		if err == nil {
			err = atomicfile.SyncDir(dir)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("--samples-out: %w", err))
		}
	} else if r.req.samplesOut != "" {
		errs = append(errs, fmt.Errorf("--samples-out: run %s has no %s (it kept no record)", id, runlog.SamplesJSONLFile))
	}
	return errors.Join(errs...)
}

// finish prints the run's summary from its fetched result.json and
// returns the exit status a local run of it would have.
func (r *remoteRun) finish(id string, st api.RunStatus, fetchErr error, stdout io.Writer) int {
	var res *loadgen.Result
	if slices.Contains(st.Files, runlog.ResultFile) {
		var err error
		if res, err = runlog.Load(r.out); err != nil {
			fetchErr = errors.Join(fetchErr, fmt.Errorf("reading the fetched %s: %w", runlog.ResultFile, err))
		}
	}
	if res != nil {
		fmt.Fprintln(stdout, runlog.SummaryLine(res))
		fmt.Fprintln(stdout, logsLine(r.out, r.created)+" (run "+id+" on "+r.c.Base()+")")
		if r.req.latency {
			r.printSpectrum(stdout)
		}
	}
	if fetchErr != nil {
		fmt.Fprintf(r.stderr, "loadgend run: run %s: %v\n", id, fetchErr)
	}
	switch {
	case r.signal() != nil:
		return signalExit(r.signal())
	case st.State != api.StateDone:
		fmt.Fprintf(r.stderr, "loadgend run: run %s ended %s on the daemon%s\n", id, st.State, reasonText(st))
		return exitError
	case res == nil || fetchErr != nil:
		return exitError
	case res.Passed():
		return exitValid
	}
	return exitInvalid
}

func reasonText(st api.RunStatus) string {
	parts := slices.DeleteFunc([]string{st.Error, st.EndReason}, func(s string) bool { return s == "" })
	if len(parts) == 0 {
		return ""
	}
	return ": " + strings.Join(parts, "; ")
}

// printSpectrum prints the fetched latency_spectrum.txt: what --latency
// prints of a local run, written by the daemon with the same code.
func (r *remoteRun) printSpectrum(stdout io.Writer) {
	b, err := os.ReadFile(filepath.Join(r.out, runlog.SpectrumFile))
	if err != nil {
		fmt.Fprintf(r.stderr, "loadgend run: --latency: %v\n", err)
		return
	}
	fmt.Fprintln(stdout)
	stdout.Write(b)
}

// headerValues are the spec's literal header values, scrubbed from what
// the daemon writes back.
func headerValues(hs map[string]string) []string {
	var out []string
	for _, v := range hs {
		out = append(out, v)
	}
	return out
}

// remoteProgress is the progress line of a remote run on a terminal.
type remoteProgress struct {
	w     io.Writer
	shown bool
}

func (p *remoteProgress) show(st api.RunStatus) {
	if p == nil {
		return
	}
	var line string
	switch {
	case st.State == api.StateQueued && st.QueuePosition != nil:
		line = fmt.Sprintf("queued on the daemon, %d ahead", *st.QueuePosition)
	case st.Progress != nil:
		line = remoteProgressText(*st.Progress)
	default:
		line = string(st.State)
	}
	fmt.Fprint(p.w, "\r\033[K"+line)
	p.shown = true
}

func (p *remoteProgress) clear() {
	if p == nil || !p.shown {
		return
	}
	fmt.Fprint(p.w, "\r\033[K")
	p.shown = false
}

// remoteProgressText is a local run's progress line from the daemon's
// snapshot, its completion rate the daemon's.
func remoteProgressText(p api.Progress) string {
	return progressFields(int64(p.Issued), int64(p.Completed), int64(p.InFlight), int64(p.Failed), p.CurrentQPS, p.ElapsedS, p.ExpectedEndS, p.P99Ms)
}
