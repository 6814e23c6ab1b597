#!/usr/bin/env python3
"""streaming_report.py OUT BOTS DURATION MODES - the figures of streaming_bench.sh.

Reads what streaming_bench.sh left in OUT for each mode (the server's last /metrics,
/stats.json, `stat levels` and its peak resident memory) and writes OUT/streaming.json and
OUT/streaming.svg. Prints a table.

Frames over budget are frames longer than the 33.3 ms period; the collector's are those that
would have fitted without their gc phase (reap_frames_over_budget_gc_total). Level-load waits
are exact quantiles of the last 4096 loads, from a pawn coming in range to the level being
visible (reap_world_level_load_wait_recent_seconds).
"""
import json
import re
import sys

COLORS = {"ue_default": "#D55E00", "ue_incremental": "#E69F00", "sliced": "#0072B2",
          "pacing": "#009E73"}
LABELS = {"ue_default": "UE default (blocking purge)",
          "ue_incremental": "UE incremental (purge still blocks)",
          "sliced": "reap: incremental, sliced", "pacing": "reap: frame-slack pacing"}
BUDGET_MS = 1000.0 / 30
REASONS = ["interval", "streaming", "pending_purge", "low_memory", "forced", "console"]


def metric(page, series):
    for line in page.splitlines():
        if line.startswith(series + " "):
            return float(line.split()[1])
    return None


def read(path):
    with open(path) as f:
        return f.read()


def mode_figures(out, mode):
    page = read("%s/streaming-%s.metrics" % (out, mode))
    stats = json.loads(read("%s/streaming-%s.stats.json" % (out, mode)))
    rss = re.search(r"(\d+)", read("%s/streaming-%s.rss" % (out, mode)) or "0")
    fig = {
        "frames": metric(page, "reap_frames_total"),
        "frames_over_budget": metric(page, "reap_frames_over_budget_total"),
        "frames_over_budget_gc": metric(page, "reap_frames_over_budget_gc_total"),
        "longest_frame_ms": 1e3 * (metric(page, "reap_tick_max_seconds") or 0),
        "load_wait_p50_ms": 1e3 * (metric(page, 'reap_world_level_load_wait_recent_seconds{quantile="0.5"}') or 0),
        "load_wait_p99_ms": 1e3 * (metric(page, 'reap_world_level_load_wait_recent_seconds{quantile="0.99"}') or 0),
        "loads": metric(page, "reap_world_level_load_wait_seconds_count"),
        "loads_held": metric(page, "reap_world_level_loads_held_total"),
        "pending_purge_max": metric(page, "reap_world_levels_pending_purge_max"),
        "streamed_in": metric(page, 'reap_world_level_streams_total{direction="in"}'),
        "streamed_out": metric(page, 'reap_world_level_streams_total{direction="out"}'),
        "levels_survived": metric(page, "reap_world_levels_survived_total"),
        "collections_by_reason": {r: metric(page, 'reap_gc_collections_by_reason_total{reason="%s"}' % r)
                                  for r in REASONS},
        "peak_rss_mb": int(rss.group(1)) / 1024.0 if rss else None,
        "objects_peak": max(stats["objects"]) if stats["objects"] else None,
        "levels_loaded_peak": max(stats.get("levels_loaded") or [0]),
    }
    series = {"t": stats["t"], "tick_max": stats["tick_max"], "levels_loaded": stats.get("levels_loaded", [])}
    return fig, series


def polyline(points, color, width=1.5, dash=None):
    d = ' stroke-dasharray="%s"' % dash if dash else ""
    return ('<polyline fill="none" stroke="%s" stroke-width="%s"%s points="%s"/>'
            % (color, width, d, " ".join("%.1f,%.1f" % p for p in points)))


def svg(series, modes, path):
    W, H, ML, MR, MT = 900, 580, 60, 20, 30
    panel = 200
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" '
           'font-size="12"><rect width="100%%" height="100%%" fill="#fff"/>' % (W, H)]
    tmax = max((s["t"][-1] - s["t"][0]) for s in series.values() if s["t"]) or 1
    frame_max = max(max(v for v in s["tick_max"] if v is not None) for s in series.values() if s["t"])
    frame_top = max(BUDGET_MS * 2, frame_max * 1.05)
    lv_top = max(max(s["levels_loaded"] or [1]) for s in series.values()) * 1.1 or 1
    panels = [("Longest frame of each second, ms (dashed: the 33.3 ms budget)", "tick_max", frame_top,
               MT), ("Streaming levels loaded", "levels_loaded", lv_top, MT + panel + 60)]
    for title, key, top, y0 in panels:
        out.append('<text x="%d" y="%d" font-weight="bold">%s</text>' % (ML, y0 - 8, title))
        out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#ccc"/>'
                   % (ML, y0, W - ML - MR, panel))
        for k in range(5):
            v = top * k / 4
            yy = y0 + panel - panel * k / 4
            out.append('<text x="%d" y="%.1f" text-anchor="end" fill="#555">%.0f</text>' % (ML - 4, yy + 4, v))
            out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#eee"/>' % (ML, W - MR, yy, yy))
        if key == "tick_max":
            yy = y0 + panel - panel * BUDGET_MS / top
            out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#999" stroke-dasharray="5 4"/>'
                       % (ML, W - MR, yy, yy))
        for m in modes:
            s = series[m]
            if not s["t"]:
                continue
            pts = []
            for t, v in zip(s["t"], s[key]):
                if v is None:
                    continue
                x = ML + (t - s["t"][0]) / tmax * (W - ML - MR)
                pts.append((x, y0 + panel - panel * min(v, top) / top))
            out.append(polyline(pts, COLORS[m]))
        out.append('<text x="%d" y="%d" fill="#555">seconds since the server started: 0 .. %.0f</text>'
                   % (ML, y0 + panel + 16, tmax))
    # The legend, two modes a row, below the last panel's caption.
    for i, m in enumerate(modes):
        lx = ML + (i % 2) * (W - ML - MR) // 2
        ly = H - 34 + (i // 2) * 18
        out.append('<rect x="%d" y="%d" width="14" height="4" fill="%s"/>' % (lx, ly - 4, COLORS[m]))
        out.append('<text x="%d" y="%d">%s</text>' % (lx + 18, ly + 1, LABELS[m]))
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    out, bots, duration, modes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4].split(",")
    figures, series = {}, {}
    for m in modes:
        figures[m], series[m] = mode_figures(out, m)
    cols = ["mode", "frames", "over", "over_gc", "max_ms", "wait50", "wait99", "loads", "held",
            "pend_max", "in", "out", "survived", "by reason (int/str/pend)", "rss_mb", "objects"]
    print("streaming_bench: %d roaming bots, %d s, deploy/profiles/openworld.ini" % (bots, duration))
    print("  ".join("%-14s" % c if i == 0 else c for i, c in enumerate(cols)))
    for m in modes:
        f = figures[m]
        r = f["collections_by_reason"]
        print("%-14s  %6.0f %5.0f %7.0f %7.1f %6.0f %6.0f %5.0f %4.0f %8.0f %4.0f %4.0f %8.0f   %3.0f/%3.0f/%3.0f%13.1f %9.0f" % (
            m, f["frames"], f["frames_over_budget"], f["frames_over_budget_gc"], f["longest_frame_ms"],
            f["load_wait_p50_ms"], f["load_wait_p99_ms"], f["loads"], f["loads_held"],
            f["pending_purge_max"], f["streamed_in"], f["streamed_out"], f["levels_survived"],
            r["interval"], r["streaming"], r["pending_purge"], f["peak_rss_mb"] or 0,
            f["objects_peak"] or 0))
    with open("%s/streaming.json" % out, "w") as fo:
        json.dump({"bots": bots, "duration": duration, "profile": "deploy/profiles/openworld.ini",
                   "modes": figures}, fo, indent=2)
        fo.write("\n")
    svg(series, modes, "%s/streaming.svg" % out)
    print("streaming_bench: wrote %s/streaming.json and %s/streaming.svg" % (out, out))


if __name__ == "__main__":
    main()
