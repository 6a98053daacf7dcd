package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// instruction is one Dockerfile instruction with its continuation lines
// joined.
type instruction struct {
	line  int
	cmd   string // upper case
	args  string
	stage int // index of the FROM it belongs to
}

// parseDockerfile reads the instructions of a Dockerfile: comments and
// blank lines dropped, backslash continuations joined.
func parseDockerfile(text string) ([]instruction, error) {
	var out []instruction
	stage := -1
	var cur strings.Builder
	start := 0
	for i, raw := range strings.Split(text, "\n") {
		line := strings.TrimSpace(raw)
		if cur.Len() == 0 && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if cur.Len() == 0 {
			start = i + 1
		} else if line == "" || strings.HasPrefix(line, "#") {
			continue // Docker skips these inside a continuation
		}
		if strings.HasSuffix(line, "\\") {
			cur.WriteString(strings.TrimSuffix(line, "\\") + " ")
			continue
		}
		cur.WriteString(line)
		full := cur.String()
		cur.Reset()
		cmd, args, _ := strings.Cut(full, " ")
		cmd = strings.ToUpper(cmd)
		if cmd == "FROM" {
			stage++
		} else if stage < 0 && cmd != "ARG" {
			return nil, fmt.Errorf("line %d: %s before FROM", start, cmd)
		}
		out = append(out, instruction{line: start, cmd: cmd, args: strings.TrimSpace(args), stage: stage})
	}
	if cur.Len() > 0 {
		return nil, fmt.Errorf("line %d: continuation runs off the end", start)
	}
	return out, nil
}

// stageInfo is what the checks need of one FROM.
type stageInfo struct {
	image, tag, name string
}

func stages(ins []instruction) []stageInfo {
	var s []stageInfo
	for _, in := range ins {
		if in.cmd != "FROM" {
			continue
		}
		f := strings.Fields(in.args)
		var st stageInfo
		for _, a := range f {
			if !strings.HasPrefix(a, "--") {
				st.image = a
				break
			}
		}
		if len(f) >= 3 && strings.EqualFold(f[len(f)-2], "AS") {
			st.name = f[len(f)-1]
		}
		ref := st.image
		if i := strings.Index(ref, "@"); i >= 0 {
			st.tag = ref[i:]
		} else if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
			st.tag = ref[i+1:]
		}
		s = append(s, st)
	}
	return s
}

// dockerfileProblems applies the rules this project holds its Dockerfile
// to: hadolint's that matter here (pinned tags, no latest, COPY not ADD,
// exec-form ENTRYPOINT, absolute WORKDIR, non-root last USER) and the
// image's contract with the docs (multi-stage, one make build, distroless
// nonroot, EXPOSE 8080, ENTRYPOINT ["/loadgend"], no HEALTHCHECK).
func dockerfileProblems(text string) []string {
	ins, err := parseDockerfile(text)
	if err != nil {
		return []string{err.Error()}
	}
	var p []string
	bad := func(in instruction, format string, a ...any) {
		p = append(p, fmt.Sprintf("line %d: %s %s: %s", in.line, in.cmd, in.args, fmt.Sprintf(format, a...)))
	}
	st := stages(ins)
	names := map[string]bool{}
	for _, s := range st {
		names[s.name] = s.name != ""
	}
	if len(st) < 2 {
		p = append(p, fmt.Sprintf("%d stages: want a build stage and a minimal final one", len(st)))
		return p
	}
	final := len(st) - 1
	var user, entry, expose string
	makeBuilds := 0
	for _, in := range ins {
		switch in.cmd {
		case "FROM":
			s := st[in.stage]
			if s.tag == "" || s.tag == "latest" {
				bad(in, "pin the base image's tag (not latest)")
			}
		case "ADD":
			bad(in, "use COPY (ADD fetches URLs and unpacks archives implicitly)")
		case "COPY":
			for _, a := range strings.Fields(in.args) {
				if from, ok := strings.CutPrefix(a, "--from="); ok && !names[from] {
					bad(in, "--from=%s is not an earlier named stage", from)
				}
			}
		case "WORKDIR":
			if !strings.HasPrefix(in.args, "/") {
				bad(in, "WORKDIR must be absolute")
			}
		case "RUN":
			if strings.Contains(in.args, "make build") {
				makeBuilds++
				if in.stage == final || !regexp.MustCompile(`^make build( [A-Z_]+=\S+)*$`).MatchString(in.args) {
					bad(in, "the build stage's build is `make build` with variables only, as a local build")
				}
			}
			if strings.Contains(in.args, "go build") {
				bad(in, "build through `make build`, not go build directly")
			}
			if in.stage == final {
				bad(in, "the final image has no shell")
			}
		case "HEALTHCHECK":
			bad(in, "Kubernetes probes /healthz and /readyz; no HEALTHCHECK")
		case "USER":
			if in.stage == final {
				user = in.args
			}
		case "ENTRYPOINT":
			if in.stage == final {
				entry = in.args
			}
		case "CMD":
			if in.stage == final && !strings.HasPrefix(in.args, "[") {
				bad(in, "use the exec (JSON) form")
			}
		case "EXPOSE":
			if in.stage == final {
				expose = in.args
			}
		case "MAINTAINER":
			bad(in, "deprecated")
		}
	}
	if makeBuilds != 1 {
		p = append(p, fmt.Sprintf("%d RUN lines with make build, want 1", makeBuilds))
	}
	if !strings.HasPrefix(st[final].image, "gcr.io/distroless/static") || !strings.Contains(st[final].tag, "nonroot") {
		p = append(p, fmt.Sprintf("final base %s: want distroless static, nonroot", st[final].image))
	}
	if u, _, _ := strings.Cut(user, ":"); u == "" || u == "0" || u == "root" {
		p = append(p, fmt.Sprintf("final USER %q: want a non-root user", user))
	}
	var ep []string
	if err := json.Unmarshal([]byte(entry), &ep); err != nil || len(ep) != 1 || ep[0] != "/loadgend" {
		p = append(p, fmt.Sprintf(`ENTRYPOINT %s: want ["/loadgend"] (exec form)`, entry))
	}
	if expose != "8080" && expose != "8080/tcp" {
		p = append(p, fmt.Sprintf("EXPOSE %q: want 8080, loadgend's documented port", expose))
	}
	return p
}

func readDockerfile(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDockerfile holds the repository's Dockerfile to the rules.
func TestDockerfile(t *testing.T) {
	for _, p := range dockerfileProblems(readDockerfile(t)) {
		t.Error(p)
	}
}

// TestDockerfileRules shows each rule can fail: a good Dockerfile with one
// fault at a time.
func TestDockerfileRules(t *testing.T) {
	good := readDockerfile(t)
	if p := dockerfileProblems(good); len(p) != 0 {
		t.Fatalf("the repository's Dockerfile has problems: %v", p)
	}
	cases := []struct{ name, old, new string }{
		{"latest tag", "FROM golang:1.26-bookworm AS build", "FROM golang:latest AS build"},
		{"no tag", "FROM golang:1.26-bookworm AS build", "FROM golang AS build"},
		{"ADD", "COPY . .", "ADD https://example.com/x.tar.gz /src/"},
		{"go build", "RUN make build VERSION=$VERSION", "RUN CGO_ENABLED=0 go build -o bin/ ./cmd/..."},
		{"make build with more", "RUN make build VERSION=$VERSION", "RUN make build VERSION=$VERSION && strip bin/*"},
		{"root user", "USER 65532:65532", "USER root"},
		{"no user", "USER 65532:65532\n", ""},
		{"shell-form entrypoint", `ENTRYPOINT ["/loadgend"]`, "ENTRYPOINT /loadgend"},
		{"other entrypoint", `ENTRYPOINT ["/loadgend"]`, `ENTRYPOINT ["/sutproxy"]`},
		{"other port", "EXPOSE 8080", "EXPOSE 8000"},
		{"healthcheck", "EXPOSE 8080", "EXPOSE 8080\nHEALTHCHECK CMD [\"/loadgend\", \"health\"]"},
		{"single stage", "FROM gcr.io/distroless/static-debian12:nonroot\n", ""},
		{"fat final image", "FROM gcr.io/distroless/static-debian12:nonroot", "FROM debian:bookworm"},
		{"unknown stage", "COPY --from=build /src/bin/loadgend", "COPY --from=builder /src/bin/loadgend"},
		{"relative workdir", "WORKDIR /src", "WORKDIR src"},
		{"dangling continuation", `ENTRYPOINT ["/loadgend"]`, `ENTRYPOINT ["/loadgend"] \`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(good, c.old) {
				t.Fatalf("the Dockerfile no longer contains %q", c.old)
			}
			bad := strings.Replace(good, c.old, c.new, 1)
			if p := dockerfileProblems(bad); len(p) == 0 {
				t.Errorf("no problem found in:\n%s", bad)
			}
		})
	}
}

// TestDockerfileBuildStage runs the build stage as Docker would, without
// Docker: the build context (the tracked files less .dockerignore's
// patterns) copied to a fresh directory standing for WORKDIR, and each RUN
// of the build stage executed there as written, with its ARG defaults
// (VERSION overridden, as --build-arg would). Then the files the final
// stage copies must exist, statically linked, trimmed and stamped.
func TestDockerfileBuildStage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds both binaries")
	}
	ins, err := parseDockerfile(readDockerfile(t))
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	src := filepath.Join(work, "src")
	copyContext(t, src)
	const version = "dockerfile-check"
	env := append(os.Environ(), "VERSION="+version)
	workdir := ""
	for _, in := range ins {
		if in.stage != 0 {
			continue
		}
		switch in.cmd {
		case "WORKDIR":
			workdir = in.args
		case "RUN":
			if workdir != "/src" {
				t.Fatalf("build stage WORKDIR %q: this test stands the context in for /src", workdir)
			}
			cmd := exec.Command("sh", "-c", in.args)
			cmd.Dir = src
			cmd.Env = env
			if out, err := cmd.CombinedOutput(); err != nil && !strings.HasPrefix(in.args, "mkdir ") {
				t.Fatalf("RUN %s: %v\n%s", in.args, err, out)
			}
		}
	}
	copied := 0
	for _, in := range ins {
		from, ok := strings.CutPrefix(strings.Fields(in.args + " x")[0], "--from=")
		if in.cmd != "COPY" || !ok || from != "build" {
			continue
		}
		f := strings.Fields(in.args)
		srcPath := f[len(f)-2]
		rel, ok := strings.CutPrefix(srcPath, "/src/")
		if !ok {
			continue // made by the build stage outside the context (mkdir)
		}
		bin := filepath.Join(src, filepath.FromSlash(rel))
		out, err := exec.Command("go", "version", "-m", bin).CombinedOutput()
		if err != nil {
			t.Fatalf("%s (COPY to %s): %v\n%s", srcPath, f[len(f)-1], err, out)
		}
		info := string(out)
		for _, want := range []string{"CGO_ENABLED=0", "-trimpath=true"} {
			if !strings.Contains(info, want) {
				t.Errorf("%s: build info lacks %q:\n%s", path.Base(srcPath), want, info)
			}
		}
		// -trimpath keeps -ldflags out of the build info; the stamped
		// string itself is in the binary's data.
		b, err := os.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte(version)) {
			t.Errorf("%s: the version %q is not stamped in", path.Base(srcPath), version)
		}
		copied++
	}
	if copied < 2 {
		t.Errorf("the final stage copies %d binaries from the build stage, want loadgend and sutproxy", copied)
	}
	out, err := exec.Command(filepath.Join(src, "bin", "sutproxy"), "--version").CombinedOutput()
	if got := strings.TrimSpace(string(out)); err != nil || got != "sutproxy "+version {
		t.Errorf("sutproxy --version = %q (%v), want %q", got, err, "sutproxy "+version)
	}
}

// copyContext copies the tracked files, less those .dockerignore excludes,
// to dst.
func copyContext(t *testing.T, dst string) {
	t.Helper()
	ignore, err := os.ReadFile(filepath.Join("..", ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	var patterns []string
	for _, l := range strings.Split(string(ignore), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			patterns = append(patterns, strings.TrimSuffix(l, "/"))
		}
	}
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	n := 0
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if ignored(f, patterns) {
			continue
		}
		if err := copyFile(filepath.Join("..", f), filepath.Join(dst, f)); err != nil {
			if os.IsNotExist(err) {
				continue // deleted in the work tree
			}
			t.Fatal(err)
		}
		n++
	}
	if n == 0 {
		t.Fatal("empty build context")
	}
}

// ignored applies .dockerignore's patterns as Docker does for the forms
// used here: a pattern matches a path or any directory above it.
func ignored(f string, patterns []string) bool {
	for _, p := range patterns {
		for cur := f; cur != "." && cur != "/"; cur = path.Dir(cur) {
			if ok, _ := path.Match(p, cur); ok {
				return true
			}
			if ok, _ := path.Match(p, path.Base(cur)); ok && !strings.Contains(p, "/") && strings.HasPrefix(p, "*") {
				return true
			}
		}
	}
	return false
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, st.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
