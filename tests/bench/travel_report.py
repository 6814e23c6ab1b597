#!/usr/bin/env python3
"""travel_report.py - the travel benchmark's summary and picture (make travel-bench).

usage: travel_report.py OUT MODE[,MODE...]

Reads OUT/travel-MODE.json (one per mode, written by travel_bench.sh) and OUT/travel-leaky.json
if there is one; prints a table a mode a line (travel time p50 and max, the longest frame of any
travel, frames over the 33 ms budget, resident memory after the first and the last travel, its
growth from the tenth travel on, leaked worlds), the ratios of the modes to the first one
(sliced against blocking), and writes OUT/travel.json and OUT/travel.svg (per travel: its
longest frame, its time, and the resident memory after it, one line a mode).
"""

import json
import os
import sys

BUDGET_MS = 1000.0 / 30
COLORS = {"blocking": "#d62728", "sliced": "#2ca02c"}
LABELS = {"blocking": "UE's blocking travel", "sliced": "reap's sliced travel (gc.FrameSlackPacing=1)"}


def quantile(values, q):
    s = sorted(values)
    if not s:
        return 0.0
    return s[min(len(s) - 1, int(q * len(s)))]


def figures(report):
    travels = report["travels"]
    rss = [t["rss_mb"] for t in travels]
    # Flat from the tenth travel on (or the first, in a shorter run).
    settled = rss[9:] if len(rss) > 10 else rss
    return {
        "travels": len(travels),
        "bots": report["bots"],
        "seconds_p50": quantile([t["seconds"] for t in travels], 0.5),
        "seconds_max": max(t["seconds"] for t in travels),
        "longest_frame_ms": max(t["longest_frame_ms"] for t in travels),
        "frames_over_budget": sum(t["frames_over_budget"] for t in travels),
        "travels_over_two_budgets": sum(1 for t in travels if t["longest_frame_ms"] > 2 * BUDGET_MS),
        "rss_first_mb": rss[0],
        "rss_last_mb": rss[-1],
        "rss_growth_settled": (max(settled) - min(settled)) / min(settled) if settled else 0.0,
        "objects_last": travels[-1]["objects"],
        "leaked_worlds": report["leaked_worlds"],
    }


def polyline(points, color):
    return ('<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>'
            % (color, " ".join("%.1f,%.1f" % p for p in points)))


def svg(reports, modes, path):
    W, ML, MR, MT, panel, gap = 900, 60, 20, 30, 160, 60
    H = MT + 3 * (panel + gap) + 10
    n = max(len(reports[m]["travels"]) for m in modes)
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" '
           'font-size="12"><rect width="100%%" height="100%%" fill="#fff"/>' % (W, H)]
    panels = [
        ("Longest frame of each travel, ms (dashed: one and two 33.3 ms budgets)", "longest_frame_ms"),
        ("Travel time, s (DEPART to ARRIVE)", "seconds"),
        ("Resident memory after each travel, MiB", "rss_mb"),
    ]
    for k, (title, key) in enumerate(panels):
        y0 = MT + k * (panel + gap)
        values = [t[key] for m in modes for t in reports[m]["travels"]]
        top = max(values) * 1.1 if values else 1
        if key == "longest_frame_ms":
            top = max(top, 2.2 * BUDGET_MS)
        bottom = 0
        if key == "rss_mb":
            bottom = min(values) * 0.9
        out.append('<text x="%d" y="%d" font-weight="bold">%s</text>' % (ML, y0 - 8, title))
        out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#ccc"/>'
                   % (ML, y0, W - ML - MR, panel))

        def y(v):
            return y0 + panel - panel * (min(v, top) - bottom) / ((top - bottom) or 1)

        for g in range(5):
            v = bottom + (top - bottom) * g / 4
            out.append('<text x="%d" y="%.1f" text-anchor="end" fill="#555">%.*f</text>'
                       % (ML - 4, y(v) + 4, 1 if key == "seconds" else 0, v))
            out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#eee"/>' % (ML, W - MR, y(v), y(v)))
        if key == "longest_frame_ms":
            for b in (BUDGET_MS, 2 * BUDGET_MS):
                out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#999" '
                           'stroke-dasharray="5 4"/>' % (ML, W - MR, y(b), y(b)))
        for m in modes:
            pts = []
            for t in reports[m]["travels"]:
                x = ML + (t["travel"] - 1) / max(n - 1, 1) * (W - ML - MR)
                pts.append((x, y(t[key])))
            out.append(polyline(pts, COLORS.get(m, "#1f77b4")))
            for p in pts:
                out.append('<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"/>' % (p[0], p[1], COLORS.get(m, "#1f77b4")))
        out.append('<text x="%d" y="%d" fill="#555">travel 1 .. %d</text>' % (ML, y0 + panel + 16, n))
    lx = ML
    for m in modes:
        label = LABELS.get(m, m)
        out.append('<rect x="%d" y="%d" width="14" height="4" fill="%s"/>' % (lx, H - 14, COLORS.get(m, "#1f77b4")))
        out.append('<text x="%d" y="%d">%s</text>' % (lx + 18, H - 9, label))
        lx += 18 + 7 * len(label) + 20
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[2])
    out, modes = sys.argv[1], sys.argv[2].split(",")
    reports = {}
    for m in modes:
        path = "%s/travel-%s.json" % (out, m)
        try:
            with open(path) as f:
                reports[m] = json.load(f)
        except (OSError, ValueError) as e:
            sys.exit("travel_report: cannot read %s: %s" % (path, e))
        if not reports[m].get("travels"):
            sys.exit("travel_report: %s has no travels" % path)
    figs = {m: figures(reports[m]) for m in modes}
    first = reports[modes[0]]
    print("travel_bench: %d %s travel(s) of map Default (%s), %d bot(s)"
          % (figs[modes[0]]["travels"], first["travel"], first["map"], first["bots"]))
    print("%-9s %9s %9s %11s %10s %9s %9s %11s %7s" % ("mode", "p50 s", "max s", "longest ms",
          "over 33ms", "RSS 1st", "RSS last", "RSS 10th+", "leaked"))
    for m in modes:
        f = figs[m]
        print("%-9s %9.3f %9.3f %11.1f %10d %9.1f %9.1f %10.1f%% %7d" % (
            m, f["seconds_p50"], f["seconds_max"], f["longest_frame_ms"], f["frames_over_budget"],
            f["rss_first_mb"], f["rss_last_mb"], 100 * f["rss_growth_settled"], f["leaked_worlds"]))
    ratios = {}
    for m in modes[1:]:
        base, f = figs[modes[0]], figs[m]
        ratios[m] = {"seconds_p50": f["seconds_p50"] / base["seconds_p50"],
                     "longest_frame_ms": f["longest_frame_ms"] / base["longest_frame_ms"]}
        print("%s against %s: travel time p50 %.2fx, longest frame %.2fx"
              % (m, modes[0], ratios[m]["seconds_p50"], ratios[m]["longest_frame_ms"]))
    summary = {"map": first["map"], "travel": first["travel"], "bots": first["bots"],
               "budget_ms": BUDGET_MS, "modes": figs, "ratios": ratios}
    leaky = "%s/travel-leaky.json" % out
    if os.path.exists(leaky):
        with open(leaky) as f:
            summary["leaky"] = json.load(f)
    with open("%s/travel.json" % out, "w") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")
    svg(reports, modes, "%s/travel.svg" % out)
    print("travel_bench: wrote %s/travel.json and %s/travel.svg" % (out, out))


if __name__ == "__main__":
    main()
