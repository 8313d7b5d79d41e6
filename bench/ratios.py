#!/usr/bin/env python3
"""bench/ratios.py JSON REF [GOAL...] - pools a hyperfine --export-json run
whose commands were listed in rounds ("NAME #1", "NAME #2", ...: hyperfine
runs each listed command in turn, so rounds alternate them and a load spike
hits all of them alike), and prints a Markdown table: each command's median,
mean, min and its median relative to REF's. A GOAL is NAME<=RATIO (median
ratio to REF at most RATIO) or NAME~OTHER<=MS (median at most MS above
OTHER's); each goal adds a line saying met or missed (judged on medians;
the first quartiles, less disturbed by other work on a shared machine, are
shown beside them)."""
import json
import re
import statistics
import sys


def main():
    data = json.load(open(sys.argv[1]))
    ref = sys.argv[2]
    times = {}
    order = []
    for r in data["results"]:
        name = re.sub(r" #\d+$", "", r["command"])
        if name not in times:
            times[name] = []
            order.append(name)
        times[name].extend(r["times"])
    med = {n: statistics.median(t) * 1000 for n, t in times.items()}
    # the first quartile: what a run costs when the shared machine lets it
    q1 = {n: statistics.quantiles(t, n=4)[0] * 1000 for n, t in times.items()}
    print("| command | runs | median [ms] | first quartile [ms] | mean ± sd [ms] | min [ms] | median / %s | first quartile / %s |" % (ref, ref))
    print("|:---|---:|---:|---:|---:|---:|---:|---:|")
    for n in order:
        t = [x * 1000 for x in times[n]]
        print("| `%s` | %d | %.2f | %.2f | %.2f ± %.2f | %.2f | %.2f | %.2f |" % (
            n, len(t), med[n], q1[n], statistics.mean(t), statistics.pstdev(t), min(t),
            med[n] / med[ref], q1[n] / q1[ref]))
    print()
    for g in sys.argv[3:]:
        m = re.fullmatch(r"(.+)~(.+)<=([\d.]+)", g)
        if m:
            a, b, lim = m.group(1), m.group(2), float(m.group(3))
            d = med[a] - med[b]
            print("- goal: `%s` within %.1f ms of `%s`: %+.2f ms (first quartiles: %+.2f ms), **%s**" % (
                a, lim, b, d, q1[a] - q1[b], "met" if d <= lim else "missed"))
            continue
        a, lim = g.split("<=")
        r = med[a] / med[ref]
        print("- goal: `%s` at most %.2f× `%s`: %.2f× (first quartiles: %.2f×), **%s**" % (
            a, float(lim), ref, r, q1[a] / q1[ref], "met" if r <= float(lim) else "missed"))


if __name__ == "__main__":
    main()
