#!/usr/bin/env python3
"""Parses one peer's output into a TSV row, and summarises rows.

  peers_parse.py row TOOL OUT TIME [STEADY] -> verdict rate p50_ms p99_ms late_p99_ms completed cpu_s rss_mb
                                               steady_cpu_s steady_window_s runq_delay_ms steal_pct
  peers_parse.py table TSV           -> Markdown: median [min-max] of 3 repeats per (target, row)
  peers_parse.py pairs TSV           -> Markdown: issue 8's ratios, each repeat's rows against each other
  peers_parse.py tokens TSV          -> Markdown: generative rows (issue 20): tokens/s, TTFT, TPOT, CPU per token
  peers_parse.py wrk2 TSV LOAD       -> Markdown: issue 28's ratios, netloadgen / wrk2 CPU per request at each rate

A generative run's row carries four more fields after steal_pct: output tokens, output tokens/s,
TTFT p99 ms, TPOT p50 ms (result.json's tokens).

TIME is /usr/bin/time -f '%U %S %M' output (user s, sys s, peak RSS KiB); STEADY is
peers.sh's "cpu_s window_s delay_ms" from /proc over the middle of the run.
Missing figures are "-"."""
import json, re, statistics, sys

NA = "-"


def dur_ms(s):
    m = re.match(r"([\d.]+)\s*(us|µs|ms|s|m)$", s.strip())
    if not m:
        return float("nan")
    v, u = float(m.group(1)), m.group(2)
    return v * {"us": 1e-3, "µs": 1e-3, "ms": 1.0, "s": 1e3, "m": 6e4}[u]


def pct(stats, q):
    for e in stats.get("percentiles", []):
        if abs(e["p"] - q) < 1e-9:
            return e["latency_ns"] / 1e6
    return NA


def loadgend(out):
    r = json.load(open(out))
    n = r["samples_completed"]
    rate = r["result_completed_samples_per_sec"] or r["metric"]["value"]  # Offline: samples/s
    f = dict(verdict=r["result_validity"], rate=rate,
             p50=pct(r["sample_latency"], 0.5), p99=pct(r["sample_latency"], 0.99),
             late=pct(r["issue_lateness"], 0.99), n=n)
    t = r.get("tokens")
    if t:
        f["tokens"] = [t["output_tokens"], t["output_tokens_per_second"], t["ttft_ns"]["p99"] / 1e6, t["tpot_ns"]["p50"] / 1e6]
    return f


def wrk(out):
    t = open(out).read()
    lat = dict(re.findall(r"^\s+(50|99)\.000%\s+(\S+)", t, re.M)) or dict(re.findall(r"^\s+(50|99)%\s+(\S+)", t, re.M))
    n = int(re.search(r"(\d+) requests in", t).group(1))
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", t).group(1))
    return dict(rate=rate, p50=dur_ms(lat.get("50", "")), p99=dur_ms(lat.get("99", "")), n=n)


def fortio(out):
    r = json.load(open(out))
    h = r["DurationHistogram"]
    p = {e["Percentile"]: e["Value"] * 1e3 for e in h.get("Percentiles", [])}
    ok = r.get("RetCodes", {}).get("200", 0)
    return dict(rate=r["ActualQPS"], p50=p.get(50, NA), p99=p.get(99, NA), n=ok,
                verdict=f'{h["Count"] - ok} errors' if h["Count"] != ok else "")


def hey(out):
    t = open(out).read()
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", t).group(1))
    lat = dict(re.findall(r"^\s+(50|99)%+ in ([\d.]+) secs", t, re.M))  # hey prints "%%"
    n = sum(int(x) for x in re.findall(r"\[200\]\s+(\d+) responses", t))
    return dict(rate=rate, p50=float(lat.get("50", "nan")) * 1e3, p99=float(lat.get("99", "nan")) * 1e3, n=n)


def ghz(out):
    r = json.load(open(out))
    p = {int(e["percentage"]): e["latency"] / 1e6 for e in r.get("latencyDistribution") or []}
    ok = r.get("statusCodeDistribution", {}).get("OK", 0)
    return dict(rate=r["rps"], p50=p.get(50, NA), p99=p.get(99, NA), n=ok)


def row(tool, out, timef, steadyf=None):
    try:
        f = {"loadgend": loadgend, "wrk": wrk, "fortio": fortio, "hey": hey, "ghz": ghz}[tool](out)
    except Exception as e:  # a failed run is a row too, not a crash of the script
        f = dict(verdict=f"unparsed:{type(e).__name__}")
    try:
        u, s, m = open(timef).read().split()[-3:]
        cpu, rss = float(u) + float(s), int(m) / 1024
    except Exception:
        cpu, rss = NA, NA
    try:
        vs = [float(x) for x in open(steadyf).read().split()]
        sc, sw, sd = vs[:3]
        st = vs[3] if len(vs) > 3 else NA
    except Exception:
        sc, sw, sd, st = NA, NA, NA, NA
    vals = [f.get("verdict") or "ok", f.get("rate", NA), f.get("p50", NA), f.get("p99", NA), f.get("late", NA), f.get("n", NA), cpu, rss,
            sc, sw, sd, st] + f.get("tokens", [])
    print("\t".join(v if isinstance(v, str) else f"{v:.4g}" if isinstance(v, float) else str(v) for v in vals))


def num(x):
    try:
        return float(x)
    except ValueError:
        return None


def cell(xs, fmt):
    xs = [x for x in xs if x is not None and x == x]
    if not xs:
        return "-"
    m = statistics.median(xs)
    return f"{fmt(m)} [{fmt(min(xs))}–{fmt(max(xs))}]" if len(xs) > 1 else fmt(m)


def tsv_rows(tsv):
    """The data rows of rows.tsv, split into fields (the header and short lines left out)."""
    for line in open(tsv):
        p = line.rstrip("\n").split("\t")
        if len(p) >= 11 and p[0] != "target":
            yield p


def table(tsv):
    groups = {}
    for p in tsv_rows(tsv):
        groups.setdefault((p[0], p[1]), []).append(p[2:])
    print("| target | row | verdicts | achieved req/s | p50 ms | p99 ms | lateness p99 ms | client CPU µs/req (whole process) "
          "| steady-state CPU µs/req | client run-queue delay ms | host steal % | peak RSS MiB |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for (target, name), reps in groups.items():
        col = lambda i: [num(r[i]) for r in reps]
        us = [num(r[7]) / num(r[6]) * 1e6 if num(r[7]) and num(r[6]) else None for r in reps]
        ext = lambda r, i: num(r[i]) if len(r) > i else None
        steady = [ext(r, 9) / (num(r[2]) * ext(r, 10)) * 1e6 if ext(r, 9) is not None and ext(r, 10) and num(r[2]) else None
                  for r in reps]
        verdicts = ",".join(sorted(set(r[1] for r in reps)))
        print(f"| {target} | {name} | {verdicts} | {cell(col(2), lambda v: f'{v:,.0f}')} | {cell(col(3), lambda v: f'{v:.3f}')} "
              f"| {cell(col(4), lambda v: f'{v:.3f}')} | {cell(col(5), lambda v: f'{v:.3f}')} | {cell(us, lambda v: f'{v:.1f}')} "
              f"| {cell(steady, lambda v: f'{v:.1f}')} | {cell([ext(r, 11) for r in reps], lambda v: f'{v:.0f}')} "
              f"| {cell([ext(r, 12) for r in reps], lambda v: f'{v:.1f}')} "
              f"| {cell(col(8), lambda v: f'{v:.0f}')} |")


def tokens(tsv):
    """Generative rows: per-token figures. CPU per token is the client's CPU over the
    output tokens (whole process), and its steady-state CPU over the tokens the window
    held at the run's output token rate."""
    groups = {}
    for p in tsv_rows(tsv):
        if len(p) >= 19:
            groups.setdefault((p[0], p[1]), []).append(p[2:])
    print("| target | row | verdicts | req/s | output tokens/s | E2E p99 ms | TTFT p99 ms | TPOT p50 ms | lateness p99 ms "
          "| client CPU µs/token (whole process) | steady-state CPU µs/token | client run-queue delay ms | host steal % |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for (target, name), reps in groups.items():
        col = lambda i: [num(r[i]) for r in reps]
        whole = [num(r[7]) / num(r[13]) * 1e6 if num(r[7]) and num(r[13]) else None for r in reps]
        steady = [num(r[9]) / (num(r[14]) * num(r[10])) * 1e6 if num(r[9]) is not None and num(r[10]) and num(r[14]) else None
                  for r in reps]
        verdicts = ",".join(sorted(set(r[1] for r in reps)))
        f1, f3 = (lambda v: f"{v:,.1f}"), (lambda v: f"{v:.3f}")
        print(f"| {target} | {name} | {verdicts} | {cell(col(2), f1)} | {cell(col(14), lambda v: f'{v:,.0f}')} "
              f"| {cell(col(4), lambda v: f'{v:.1f}')} | {cell(col(15), f3)} | {cell(col(16), f3)} | {cell(col(5), f3)} "
              f"| {cell(whole, lambda v: f'{v:.2f}')} | {cell(steady, lambda v: f'{v:.2f}')} "
              f"| {cell(col(11), lambda v: f'{v:.0f}')} | {cell(col(12), lambda v: f'{v:.1f}')} |")


# Issue 8's comparisons, made within one repeat (the rows of a repeat run
# back to back, so they saw the same host): (label, numerator row,
# denominator row, figure) where the figure is CPU per request or the rate.
PAIRS = [
    ("HTTP 20k CPU/request, netloadgen / wrk (C, closed loop)", "nlg-http-bin", "wrk-c32", "cpu"),
    ("HTTP 20k CPU/request, netloadgen / fortio", "nlg-http-bin", "fortio-qps", "cpu"),
    ("gRPC req/s, netloadgen Offline 32 / ghz -c 32", "nlg-grpc-offline32", "ghz-c32", "rate"),
    # Issue 19: the same comparisons over TLS (bench/peers.sh tls).
    ("HTTPS CPU/request, netloadgen / fortio (same rate)", "nlg-https", "fortio-https", "cpu"),
    ("HTTPS steady CPU/request, netloadgen / fortio", "nlg-https", "fortio-https", "steady"),
    ("HTTPS steady CPU/request, goroutine pool / fortio", "nlg-https-pool", "fortio-https", "steady"),
    ("gRPC-TLS req/s, netloadgen Offline 32 / ghz -c 32", "nlg-grpcs-offline32", "ghz-tls-c32", "rate"),
]


def pairs(tsv):
    reps = {}
    for p in tsv_rows(tsv):
        reps.setdefault((p[0], p[2]), {})[p[1]] = p
    fig = {"cpu": lambda r: num(r[9]) / num(r[8]) * 1e6 if num(r[9]) and num(r[8]) else None,
           "steady": lambda r: num(r[11]) / (num(r[4]) * num(r[12])) * 1e6
           if len(r) > 12 and num(r[11]) and num(r[4]) and num(r[12]) else None,
           "rate": lambda r: num(r[4])}
    print("| target | comparison | per repeat | median |")
    print("|---|---|---|---|")
    for target in dict.fromkeys(t for t, _ in reps):
        for label, a, b, kind in PAIRS:
            got = []
            for (t, rep), rows in reps.items():
                if t == target and a in rows and b in rows:
                    x, y = fig[kind](rows[a]), fig[kind](rows[b])
                    if x is not None and y:
                        got.append((rep, x, y))
            if got:
                each = ", ".join(f"{x:.1f}/{y:.1f} = {x / y:.2f}x" if kind != "rate" else f"{x:,.0f}/{y:,.0f} = {x / y:.2f}x"
                                 for _, x, y in got)
                print(f"| {target} | {label} | {each} | {statistics.median(x / y for _, x, y in got):.2f}x |")


def wrk2(tsv, loadf=None):
    """Issue 28: rows nlg-http-bin-rQ and wrk2-rQ of each repeat (peers.sh wrk2), the CPU
    per request of each (whole process, and steady state), their ratio per repeat and the
    median of the ratios; LOAD has each row's 1-minute load average at its start."""
    load = {}
    if loadf:
        for line in open(loadf):
            p = line.split()
            if len(p) == 4:
                load[(p[0], p[1], p[2])] = p[3]
    reps = {}
    for p in tsv_rows(tsv):
        m = re.match(r"(nlg-http-bin|nlg-before|wrk2)-r(\d+)$", p[1])
        if m:
            reps.setdefault((p[0], int(m.group(2))), {}).setdefault(p[2], {})[m.group(1)] = p
    whole = lambda r: num(r[9]) / num(r[8]) * 1e6 if num(r[9]) and num(r[8]) else None
    steady = lambda r: num(r[11]) / (num(r[4]) * num(r[12])) * 1e6 if len(r) > 12 and num(r[11]) and num(r[4]) and num(r[12]) else None
    print("| target | rate | repeat | row | verdict, lateness p99 ms | load | CPU µs/req (whole) | / wrk2 | steady CPU µs/req | / wrk2 |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    summary = []
    for (target, rate), byrep in sorted(reps.items()):
        ratios = {}
        for rep, rows in sorted(byrep.items(), key=lambda kv: int(kv[0])):
            if "wrk2" not in rows:
                continue
            b = rows["wrk2"]
            wb, sb = whole(b), steady(b)
            for kind in ("nlg-http-bin", "nlg-before", "wrk2"):
                if kind not in rows:
                    continue
                a = rows[kind]
                wa, sa = whole(a), steady(a)
                rw = wa / wb if wa and wb else None
                rs = sa / sb if sa and sb else None
                if kind != "wrk2":
                    ratios.setdefault(kind, ([], []))
                    if rw:
                        ratios[kind][0].append(rw)
                    if rs:
                        ratios[kind][1].append(rs)
                f = lambda v, d=2: f"{v:.{d}f}" if v else "-"
                verdict = a[3] if kind == "wrk2" else f"{a[3]}, {a[7]}"
                print(f"| {target} | {rate} | {rep} | {a[1]} | {verdict} | {load.get((target, a[1], rep), '-')} "
                      f"| {f(wa)} | {f(rw, 3)} | {f(sa)} | {f(rs, 3)} |")
        for kind, (rw, rs) in ratios.items():
            summary.append((target, rate, kind, rw, rs))
    print()
    print("| target | rate | row | pairs | median ratio to wrk2, whole process | median ratio, steady state |")
    print("|---|---|---|---|---|---|")
    for target, rate, kind, rw, rs in summary:
        med = lambda xs: f"{statistics.median(xs):.3f} [{min(xs):.3f}–{max(xs):.3f}]" if xs else "-"
        print(f"| {target} | {rate} | {kind} | {len(rw)} | {med(rw)} | {med(rs)} |")


if __name__ == "__main__":
    if sys.argv[1] == "row":
        row(*sys.argv[2:6])
    elif sys.argv[1] == "tokens":
        tokens(sys.argv[2])
    elif sys.argv[1] == "wrk2":
        wrk2(*sys.argv[2:4])
    elif sys.argv[1] == "pairs":
        pairs(sys.argv[2])
    else:
        table(sys.argv[2])
