#!/usr/bin/env python3
"""dxcl's idle hand-off against the host's state, from runs of `dxcl bench --markdown` on NVIDIA
(docs/benchmarks.md, "The idle hand-off on NVIDIA: fast and slow host states").

Usage: states.py OUT.svg LABEL=BENCH_MD [LABEL=BENCH_MD ...]

Per row (kind and size) of each bench: NVIDIA's own hand-off (`platform-handoff`, its median) on
the x axis, how much longer dxcl's took (`default` minus it) on the y axis, the issue's target
(2 µs) as a line. NVIDIA's own time tells the host's state of that row: the same calls, 2-3 µs
on a host in its fast state, 4-7 µs in its slow one. Prints each bench's points and, from three
rows up, its least-squares line, and writes the chart.
"""
import sys

COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]


def points(path):
    """[(kind size, NVIDIA's own µs, dxcl's µs)] of one bench's table."""
    own, dxcl = {}, {}
    for line in open(path, encoding="utf-8"):
        cells = [c.strip() for c in line.split("|")]
        if len(cells) < 9 or cells[1] not in ("buffer", "texture2d"):
            continue
        row, case = f"{cells[1]} {cells[2]}", cells[4]
        try:
            median = float(cells[7])
        except ValueError:
            continue
        if case == "platform-handoff":
            own[row] = median
        elif case == "default":
            dxcl[row] = median
    return [(r, own[r], dxcl[r]) for r in dxcl if r in own]


def fit(pts):
    """Least-squares slope and intercept of dxcl's extra over NVIDIA's own time."""
    n = len(pts)
    xs = [p[1] for p in pts]
    ys = [p[2] - p[1] for p in pts]
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0
    return slope, my - slope * mx


def svg(runs, out):
    w, h, left, right, top, bottom = 680, 440, 60, 190, 20, 50
    every = [p for _, pts in runs for p in pts]
    xmax = max(p[1] for p in every) * 1.1
    ymax = max(max(p[2] - p[1] for p in every) * 1.1, 3)
    sx = lambda x: left + x / xmax * (w - left - right)
    sy = lambda y: h - bottom - y / ymax * (h - top - bottom)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
             'font-family="sans-serif" font-size="12">',
             f'<rect width="{w}" height="{h}" fill="white"/>',
             f'<line x1="{sx(0)}" y1="{sy(0)}" x2="{sx(xmax)}" y2="{sy(0)}" stroke="black"/>',
             f'<line x1="{sx(0)}" y1="{sy(0)}" x2="{sx(0)}" y2="{sy(ymax)}" stroke="black"/>']
    for x in range(0, int(xmax) + 1):
        parts.append(f'<text x="{sx(x)}" y="{sy(0) + 16}" text-anchor="middle">{x}</text>')
    for y in range(0, int(ymax) + 1, 2):
        parts.append(f'<text x="{sx(0) - 6}" y="{sy(y) + 4}" text-anchor="end">{y}</text>')
    parts.append(f'<line x1="{sx(0)}" y1="{sy(2)}" x2="{sx(xmax)}" y2="{sy(2)}" '
                 'stroke="gray" stroke-dasharray="5,4"/>')
    parts.append(f'<text x="{sx(xmax) + 4}" y="{sy(2) + 4}" fill="gray">target 2 µs</text>')
    parts.append(f'<text x="{(sx(0) + sx(xmax)) / 2}" y="{h - 12}" text-anchor="middle">'
                 "NVIDIA's own idle hand-off, median µs (the host's state)</text>")
    parts.append(f'<text transform="translate(16 {(sy(0) + sy(ymax)) / 2}) rotate(-90)" '
                 'text-anchor="middle">dxcl over NVIDIA\'s own, µs</text>')
    for i, (label, pts) in enumerate(runs):
        c = COLOURS[i % len(COLOURS)]
        for _, own, dxcl in pts:
            parts.append(f'<circle cx="{sx(own):.1f}" cy="{sy(dxcl - own):.1f}" r="4" '
                         f'fill="{c}" fill-opacity="0.75"/>')
        ly = top + 16 + 18 * i
        parts.append(f'<circle cx="{w - right + 24}" cy="{ly - 4}" r="4" fill="{c}"/>')
        parts.append(f'<text x="{w - right + 34}" y="{ly}">{label}</text>')
    parts.append("</svg>")
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n".join(parts) + "\n")


def main():
    if len(sys.argv) < 3 or any("=" not in a for a in sys.argv[2:]):
        sys.exit(__doc__)
    runs = []
    for arg in sys.argv[2:]:
        label, path = arg.split("=", 1)
        pts = points(path)
        if not pts:
            sys.exit(f"{path}: no rows with both dxcl's and NVIDIA's own idle hand-off")
        runs.append((label, pts))
        met = sum(1 for _, own, dxcl in pts if dxcl - own <= 2.0)
        if len(pts) >= 3:
            slope, at0 = fit(pts)
            line = (f"dxcl over NVIDIA's own = {at0:+.1f} µs {slope:+.2f} × NVIDIA's own "
                    "(least squares)")
        else:
            line = "too few rows for a line"
        print(f"{label}: {met} of {len(pts)} rows within 2 µs; {line}")
        for row, own, dxcl in sorted(pts, key=lambda p: p[1]):
            print(f"  {row:18} NVIDIA's own {own:5.1f} µs, dxcl {dxcl:5.1f} µs, {dxcl - own:+5.1f}")
    svg(runs, sys.argv[1])
    print(f"chart: {sys.argv[1]}")


if __name__ == "__main__":
    main()
