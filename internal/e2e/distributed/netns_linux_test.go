package distributed_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
)

// netnsHowTo says how to run the network-namespace test where it was not.
const netnsHowTo = "it needs root and iproute2's `ip netns` (CAP_SYS_ADMIN, CAP_NET_ADMIN): run it as root, " +
	"e.g. `sudo env PATH=$PATH go test ./internal/e2e/distributed -run TestWorkersInNetworkNamespaces`; .ci/run runs as root and installs iproute2"

// needNetns skips the test where network namespaces cannot be made, or
// fails it in CI (CI=true), where .ci/run provides them.
func needNetns(t *testing.T) {
	t.Helper()
	why := ""
	if os.Geteuid() != 0 {
		why = "not root"
	} else if _, err := exec.LookPath("ip"); err != nil {
		why = "no ip command (iproute2)"
	} else {
		// Listing needs no privilege: making one does.
		probe := fmt.Sprintf("nlgprobe%d", os.Getpid())
		if out, err := exec.Command("ip", "netns", "add", probe).CombinedOutput(); err != nil {
			why = fmt.Sprintf("ip netns add: %v: %s", err, strings.TrimSpace(string(out)))
		} else {
			_ = exec.Command("ip", "netns", "del", probe).Run()
		}
	}
	if why == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s: %s", why, netnsHowTo)
	}
	t.Skipf("%s: %s", why, netnsHowTo)
}

// ipCmd runs ip with args, failing the test with its output.
func ipCmd(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// netLab is a bridge in the root namespace with the coordinator's and the
// target's addresses, and a network namespace per worker on a veth pair to
// it, each with an address of its own in a private /24.
type netLab struct {
	prefix string // of every name: unique to this process
	subnet string // "10.213.N."
	bridge string
}

// newNetLab makes the bridge; the namespaces come with addHost. Everything
// is removed when the test ends, failed or not (a namespace's veth goes
// with it).
func newNetLab(t *testing.T) *netLab {
	t.Helper()
	id := os.Getpid() % 10000
	l := &netLab{prefix: fmt.Sprintf("nlg%d", id), subnet: fmt.Sprintf("10.213.%d.", id%250+1)}
	l.bridge = l.prefix + "br"
	_ = exec.Command("ip", "link", "del", l.bridge).Run() // a leftover of a killed run of this pid
	ipCmd(t, "link", "add", l.bridge, "type", "bridge")
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", l.bridge).Run() })
	ipCmd(t, "addr", "add", l.coordIP()+"/24", "dev", l.bridge)
	ipCmd(t, "addr", "add", l.targetIP()+"/24", "dev", l.bridge)
	ipCmd(t, "link", "set", l.bridge, "up")
	return l
}

func (l *netLab) coordIP() string  { return l.subnet + "1" }
func (l *netLab) targetIP() string { return l.subnet + "2" }

// addHost makes namespace k with address subnet.(10+k) on a veth to the
// bridge. An isolated host reaches the coordinator only: its address is a
// /32 with one route, to the coordinator's, so the target's is
// unreachable from it. It returns the namespace's name and its address.
func (l *netLab) addHost(t *testing.T, k int, isolated bool) (ns, ip string) {
	t.Helper()
	ns = fmt.Sprintf("%sns%d", l.prefix, k)
	host, peer := fmt.Sprintf("%sh%d", l.prefix, k), fmt.Sprintf("%sp%d", l.prefix, k)
	ip = fmt.Sprintf("%s%d", l.subnet, 10+k)
	_ = exec.Command("ip", "netns", "del", ns).Run()
	ipCmd(t, "netns", "add", ns)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	ipCmd(t, "link", "add", host, "type", "veth", "peer", "name", peer, "netns", ns)
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", host).Run() })
	ipCmd(t, "link", "set", host, "master", l.bridge, "up")
	ipCmd(t, "-n", ns, "link", "set", "lo", "up")
	if isolated {
		ipCmd(t, "-n", ns, "addr", "add", ip+"/32", "dev", peer)
		ipCmd(t, "-n", ns, "link", "set", peer, "up")
		ipCmd(t, "-n", ns, "route", "add", l.coordIP()+"/32", "dev", peer)
	} else {
		ipCmd(t, "-n", ns, "addr", "add", ip+"/24", "dev", peer)
		ipCmd(t, "-n", ns, "link", "set", peer, "up")
	}
	return ns, ip
}

// TestWorkersInNetworkNamespaces is the fifth point: three workers,
// each in its own network namespace with its own address, are three hosts
// to the target: the target sees each worker's requests from that worker's
// address (as many as result.json says it issued) and none from anywhere
// else. Then a worker whose namespace has no route to the target (it
// reaches the coordinator only) fails its run at the probe, naming it,
// before any load: the target sees no inference request at all.
func TestWorkersInNetworkNamespaces(t *testing.T) {
	needNetns(t)
	loadgend, sutproxy := built(t)
	lab := newNetLab(t)
	upstream := startTarget(t, sutproxy, "127.0.0.1:0")
	view := startView(t, lab.targetIP()+":0", upstream, byIP)
	c := startCoordinator(t, loadgend, lab.coordIP()+":0", "LOADGEND_ALLOWED_HOSTS="+lab.subnet+"0/24")

	names := []string{"h1", "h2", "h3"}
	procs := map[string]*proc{}
	addrs := map[string]string{}
	for k, n := range names {
		ns, ip := lab.addHost(t, k+1, false)
		procs[n] = startWorker(t, loadgend, c, n, ip+":0", []string{"ip", "netns", "exec", ns})
		addrs[n] = ip
	}
	c.waitIdle(t, slices.Collect(mapProcs(procs)), names...)
	for n, w := range c.workers(t) {
		if host, _, err := net.SplitHostPort(w.Address); err != nil || host != addrs[n] {
			t.Errorf("GET /v1/workers: %s at %q, want its namespace's address %s", n, w.Address, addrs[n])
		}
	}

	dir := t.TempDir()
	out := filepath.Join(dir, "run")
	inv := cli(t, loadgend, runArgs(c, 3, view.addr, out, filepath.Join(dir, "s.jsonl"), serverSettings(300, 2000, 600)...)...)
	if inv.code != 0 {
		t.Fatalf("want exit 0 (VALID): %v", inv)
	}
	res := loadResult(t, out)
	checkWorkersField(t, out, res, names)
	seen := view.byPeer()
	if got, want := keys(seen), sortedValues(addrs); !slices.Equal(got, want) {
		t.Errorf("the target saw requests from %v: want exactly the workers' addresses %v", got, want)
	}
	for _, w := range res.Workers {
		if n := int64(len(seen[addrs[w.Name]])); n != w.SamplesIssued {
			t.Errorf("the target saw %d requests from %s (%s), result.json says it issued %d", n, w.Name, addrs[w.Name], w.SamplesIssued)
		}
	}
	t.Logf("the target saw %d hosts: %v", len(seen), keys(seen))

	t.Run("unreachable target", func(t *testing.T) {
		// h2 and h3 leave: killed, they are lost after the worker timeout
		// and not picked again.
		procs["h2"].kill()
		procs["h3"].kill()
		waitLost(t, c, "h2", "h3")
		ns, _ := lab.addHost(t, 9, true)
		iso := startWorker(t, loadgend, c, "cut", lab.subnet+"19:0", []string{"ip", "netns", "exec", ns})
		c.waitIdle(t, []*proc{procs["h1"], iso}, "h1", "cut")
		before := view.infers()
		inv := cli(t, loadgend, runArgs(c, 2, view.addr, filepath.Join(dir, "cut"), filepath.Join(dir, "cut.jsonl"), serverSettings(300, 2000, 600)...)...)
		if inv.code != 2 || !regexp.MustCompile(`worker cut\b.*`+regexp.QuoteMeta(view.addr)).MatchString(inv.stderr) {
			t.Errorf("want exit 2, the run failed naming worker cut and the target it could not reach: %v", inv)
		}
		if after := view.infers(); after != before {
			t.Errorf("the target saw %d inference requests during the failed run: want none (it fails before any load)", after-before)
		}
	})
}

func mapProcs(m map[string]*proc) func(func(*proc) bool) {
	return func(yield func(*proc) bool) {
		for _, p := range m {
			if !yield(p) {
				return
			}
		}
	}
}

func sortedValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

// waitLost polls GET /v1/workers until the named workers are lost, within
// the worker timeout and 10 s.
func waitLost(t *testing.T, c *coordinator, names ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), workerTimeout+10*time.Second)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var list api.WorkerList
	for {
		if c.get(ctx, "/v1/workers", &list) == nil && !slices.ContainsFunc(list.Workers, func(w api.WorkerInfo) bool {
			return slices.Contains(names, w.Name) && w.State != api.WorkerLost
		}) {
			return
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("workers %v not lost within %v: %+v", names, workerTimeout+10*time.Second, list)
		}
	}
}
