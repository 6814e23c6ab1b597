#!/usr/bin/env python3
"""pacing_report.py OUT PROPS BOTS DURATION INTERVAL - the figures of pacing_bench.sh.

Reads what pacing_bench.sh left in OUT for each mode (the server's log, its last /metrics and
/stats.json) and writes OUT/pacing.json and OUT/pacing.svg. Prints a table.

Frames over budget caused by the collector: frames the server logged as slower than 33.3 ms
(engine.SlowFrameMs) that would have fitted without their gc phase. Seconds from garbage to
freed memory are estimated from the collections' start and end times, assuming garbage
appears at a steady rate (the churn is steady): garbage made at time x is freed when the
purge of the first collection that starts after x ends.
"""
import datetime
import json
import re
import sys

MODES = ["ue_default", "ue_incremental", "pacing"]
COLORS = {"ue_default": "#d62728", "ue_incremental": "#1f77b4", "pacing": "#2ca02c"}
BUDGET_MS = 1000.0 / 30

SLOW = re.compile(r"slow frame \d+: ([\d.]+) ms \(net ([\d.]+), world ([\d.]+), "
                  r"repl ([\d.]+), gc ([\d.]+)\)")
ENDED = re.compile(r"^(\S+) .*gc: interval collection ended: (\d+) frame\(s\), ([\d.]+) s, "
                   r"([-+\d.]+) s against")
MARK = re.compile(r"gc: collection \d+: .* mark ([\d.]+) ms in (\d+) slice")


def stamp(text):
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()


def metric(page, name):
    for line in page.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


def histogram_quantile(page, name, q):
    buckets = []
    for line in page.splitlines():
        m = re.match(name + r'_bucket\{le="([^"]+)"\} (\d+)', line)
        if m:
            buckets.append((float(m.group(1)), int(m.group(2))))
    total = buckets[-1][1] if buckets else 0
    for bound, cum in buckets:
        if total and cum >= q * total:
            return bound
    return None


def quantile(sorted_values, q):
    if not sorted_values:
        return None
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def garbage_latency(collections):
    """collections: (start, end) in seconds, by start. Latencies of garbage made between the
    first start and the last start, sampled every 10 ms."""
    lat = []
    for k in range(1, len(collections)):
        s0, s1, e1 = collections[k - 1][0], collections[k][0], collections[k][1]
        x = s0
        while x < s1:
            lat.append(e1 - x)
            x += 0.01
    lat.sort()
    return lat


def mode_figures(out, mode):
    log = open(f"{out}/pacing-{mode}.log").read().splitlines()
    page = open(f"{out}/pacing-{mode}.metrics").read()
    stats = json.load(open(f"{out}/pacing-{mode}.stats.json"))
    over = over_gc = 0
    for line in log:
        m = SLOW.search(line)
        if not m:
            continue
        frame, gc = float(m.group(1)), float(m.group(5))
        if frame > BUDGET_MS:
            over += 1
            if frame - gc <= BUDGET_MS:
                over_gc += 1
    cols, late, frames = [], [], []
    for line in log:
        m = ENDED.search(line)
        if m:
            end = stamp(m.group(1))
            cols.append((end - float(m.group(3)), end))
            frames.append(int(m.group(2)))
            late.append(float(m.group(4)))
    marks = [float(m.group(1)) for m in map(MARK.search, log) if m]
    lat = garbage_latency(sorted(cols))
    rss = [v for v in stats["rss_mb"] if v is not None]
    return {
        "frames": metric(page, "reap_tick_seconds_count"),
        "frames_over_budget": over,
        "frames_over_budget_caused_by_gc": over_gc,
        "longest_frame_ms": 1e3 * metric(page, "reap_tick_max_seconds"),
        "tick_p99_ms_bucket_bound": 1e3 * histogram_quantile(page, "reap_tick_seconds", 0.99),
        "objects_peak": max(stats["objects"]),
        "objects_final": stats["objects"][-1],
        "rss_mb_peak": max(rss) if rss else None,
        "rss_mb_final": rss[-1] if rss else None,
        "interval_collections": len(cols),
        "collection_frames_mean": sum(frames) / len(frames) if frames else None,
        "collection_late_seconds_max": max(late) if late else None,
        "collection_mark_ms_max": max(marks) if marks else None,
        "garbage_to_freed_seconds_p50": quantile(lat, 0.50),
        "garbage_to_freed_seconds_p99": quantile(lat, 0.99),
        "early_starts": metric(page, "reap_gc_early_starts_total"),
        "series": {"t": stats["t"], "tick_max_ms": stats["tick_max"]},
    }


def svg(results, props, path):
    w, h, ml, mr, mt, mb = 900, 360, 56, 150, 20, 36
    tmax = max(max(r["series"]["t"]) for r in results.values())
    ymax = max(max(v for v in r["series"]["tick_max_ms"] if v is not None)
               for r in results.values())
    ymax = max(ymax, BUDGET_MS) * 1.1
    x = lambda t: ml + t / tmax * (w - ml - mr)
    y = lambda v: mt + (1 - v / ymax) * (h - mt - mb)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
             f'font-family="sans-serif" font-size="11">',
             f'<rect width="{w}" height="{h}" fill="white"/>',
             f'<text x="{ml}" y="14" font-size="13">Longest frame per second (ms), '
             f'{props:,} persistent objects under churn: UE modes vs frame-slack '
             f'pacing</text>']
    for i in range(6):
        v = ymax * i / 5
        parts.append(f'<line x1="{ml}" x2="{w - mr}" y1="{y(v):.1f}" y2="{y(v):.1f}" '
                     f'stroke="#eee"/><text x="{ml - 4}" y="{y(v) + 4:.1f}" '
                     f'text-anchor="end">{v:.0f}</text>')
    step = 10 if tmax <= 120 else 30
    for t in range(0, int(tmax) + 1, step):
        parts.append(f'<text x="{x(t):.1f}" y="{h - mb + 14}" text-anchor="middle">{t}</text>')
    parts.append(f'<text x="{(ml + w - mr) / 2}" y="{h - 6}" text-anchor="middle">'
                 f'seconds since the server started</text>')
    parts.append(f'<line x1="{ml}" x2="{w - mr}" y1="{y(BUDGET_MS):.1f}" '
                 f'y2="{y(BUDGET_MS):.1f}" stroke="#000" stroke-dasharray="5 4"/>'
                 f'<text x="{w - mr + 4}" y="{y(BUDGET_MS) + 4:.1f}">33.3 ms budget</text>')
    for i, (mode, r) in enumerate(results.items()):
        pts = " ".join(f"{x(t):.1f},{y(v):.1f}" for t, v in
                       zip(r["series"]["t"], r["series"]["tick_max_ms"]) if v is not None)
        parts.append(f'<polyline points="{pts}" fill="none" stroke="{COLORS[mode]}" '
                     f'stroke-width="1.4"/>')
        ly = mt + 90 + 18 * i
        parts.append(f'<line x1="{w - mr + 4}" x2="{w - mr + 20}" y1="{ly}" y2="{ly}" '
                     f'stroke="{COLORS[mode]}" stroke-width="3"/><text x="{w - mr + 24}" '
                     f'y="{ly + 4}">{mode}</text>')
    parts.append("</svg>")
    open(path, "w").write("\n".join(parts) + "\n")


def main():
    if len(sys.argv) != 6:
        sys.exit("usage: pacing_report.py OUT PROPS BOTS DURATION INTERVAL")
    out, props, bots, duration, interval = sys.argv[1:]
    results = {mode: mode_figures(out, mode) for mode in MODES}
    report = {"props": int(props), "bots": int(bots), "duration_s": int(duration),
              "interval_s": int(interval), "budget_ms": BUDGET_MS, "modes": results}
    json.dump(report, open(f"{out}/pacing.json", "w"), indent=1)
    svg(results, int(props), f"{out}/pacing.svg")
    keys = [k for k in results["pacing"] if k != "series"]
    print(f"{'':36}" + "".join(f"{m:>16}" for m in MODES))
    for k in keys:
        row = []
        for m in MODES:
            v = results[m][k]
            row.append(f"{v:16.3f}" if isinstance(v, float) else f"{str(v):>16}")
        print(f"{k:36}" + "".join(row))
    print(f"wrote {out}/pacing.json and {out}/pacing.svg")


if __name__ == "__main__":
    main()
