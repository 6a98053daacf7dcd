package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/netloadgen/netloadgen/pkg/atomicfile"
	"github.com/netloadgen/netloadgen/pkg/compliance"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runner"
)

// ComplianceFile is the verdict's JSON in --out.
const ComplianceFile = "compliance.json"

const complianceUsage = "usage: loadgend compliance TEST01|TEST04|TEST05|caching [--audit-config FILE] [--threshold F] [--duplicate-factor N] [run flags...]"

// complianceCommand runs a compliance test's pair of runs and prints the
// verdict with its figures: exit 0 PASS, 1 FAIL, 2 when a run could not be
// carried out. The run flags are `loadgend run`'s; with --out each run
// writes its logs in a subdirectory named after it.
func complianceCommand(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fail := func(err error) int {
		fmt.Fprintf(stderr, "loadgend compliance: %v\n", err)
		return exitError
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
		fmt.Fprintln(stdout, complianceUsage)
		if len(args) == 0 {
			return exitError
		}
		return exitValid
	}
	test, err := compliance.ParseTest(args[0])
	if err != nil {
		return fail(err)
	}
	own, rest, err := splitComplianceFlags(args[1:])
	if err != nil {
		return fail(err)
	}
	var o compliance.Options
	if p := own["audit-config"]; p != "" {
		f, err := os.Open(p)
		if err != nil {
			return fail(fmt.Errorf("--audit-config: %w", err))
		}
		cfg, err := loadgen.ParseConfig(p, f)
		f.Close()
		if err != nil {
			return fail(fmt.Errorf("--audit-config: %w", err))
		}
		o.Audit = cfg
	}
	if v, ok := own["threshold"]; ok {
		th, err := strconv.ParseFloat(v, 64)
		if err != nil || !(th > 0 && th < 100) {
			return fail(fmt.Errorf("--threshold %q: want a fraction (0.1) or a percentage (10)", v))
		}
		if th >= 1 {
			th /= 100
		}
		o.Threshold = th
	}
	if v, ok := own["duplicate-factor"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 2 {
			return fail(fmt.Errorf("--duplicate-factor %q: want an integer of at least 2", v))
		}
		o.DuplicateFactor = n
	}
	req, err := parseRunFlags(rest, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitValid
	}
	if err != nil {
		return fail(err)
	}
	if req.mode != modePerformance {
		return fail(errors.New("--mode: a compliance test chooses its runs' modes itself"))
	}
	if req.spec.Settings.Shape != nil {
		// The audits compare LoadGen runs of one scenario, rerun with
		// their own settings: a shaped run is none.
		return fail(errors.New("--stages, --trace and --mix: a compliance test audits a LoadGen scenario's runs; a load shape is no scenario, so there is nothing to audit: leave them out"))
	}
	spec := req.spec
	o.LoadedSamples = spec.PerformanceSamples
	if spec.Data == "" {
		o.LoadedSamples = min(spec.TotalSamples, spec.PerformanceSamples)
	}
	if ov := spec.Settings.PerformanceSampleCountOverride; ov > 0 {
		o.LoadedSamples = min(o.LoadedSamples, int(ov))
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: req.level}))
	v, err := compliance.Run(ctx, test, spec.Settings, o, cmdRunner{spec: spec, log: log})
	if err != nil {
		return fail(err)
	}
	fmt.Fprint(stdout, v.Text())
	if spec.OutDir != "" {
		if err := writeVerdict(spec.OutDir, v); err != nil {
			return fail(err)
		}
		fmt.Fprintf(stdout, "logs: %s\n", spec.OutDir)
	}
	if v.Pass {
		return exitValid
	}
	return exitInvalid
}

// splitComplianceFlags takes the compliance flags out of args (as --name
// value or --name=value) and leaves the run flags.
func splitComplianceFlags(args []string) (map[string]string, []string, error) {
	own := map[string]string{}
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name := strings.TrimLeft(a, "-")
		if name == a || !strings.HasPrefix(a, "-") {
			rest = append(rest, a)
			continue
		}
		name, val, hasVal := strings.Cut(name, "=")
		switch name {
		case "audit-config", "threshold", "duplicate-factor":
		default:
			rest = append(rest, a)
			continue
		}
		if _, dup := own[name]; dup {
			return nil, nil, fmt.Errorf("--%s given twice", name)
		}
		if !hasVal {
			if i+1 >= len(args) {
				return nil, nil, fmt.Errorf("--%s needs a value", name)
			}
			i++
			val = args[i]
		}
		own[name] = val
	}
	return own, rest, nil
}

func writeVerdict(dir string, v *compliance.Verdict) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return atomicfile.Write(dir, ComplianceFile, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	})
}

// cmdRunner carries out a test's runs with pkg/runner, each in its own
// subdirectory of the spec's OutDir.
type cmdRunner struct {
	spec runner.Spec
	log  *slog.Logger
}

func (c cmdRunner) specFor(name string, s loadgen.Settings) runner.Spec {
	sp := c.spec
	sp.Settings = s
	if sp.OutDir != "" {
		sp.OutDir = filepath.Join(sp.OutDir, name)
	}
	return sp
}

func (c cmdRunner) Performance(ctx context.Context, name string, s loadgen.Settings) (*loadgen.Result, []loadgen.AccuracyEntry, error) {
	c.log.Info("compliance run", "run", name)
	out, err := runner.Run(ctx, c.specFor(name, s), runner.Options{Logger: c.log})
	if err != nil {
		return nil, nil, err
	}
	return out.Result, out.Accuracy, nil
}

func (c cmdRunner) Accuracy(ctx context.Context, name string, s loadgen.Settings) (*loadgen.AccuracyResult, error) {
	c.log.Info("compliance run", "run", name)
	out, err := runner.RunAccuracy(ctx, c.specFor(name, s), runner.Options{Logger: c.log})
	if err != nil {
		return nil, err
	}
	return out.Result, nil
}
