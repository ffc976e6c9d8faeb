"""What the two table scripts share (bench_table.py for chapter 9's benchmarks,
part4_table.py for Part IV's): criterion's medians, the formats of times and ratios, the
JSON files the shell scripts write, and the frame of a log-log plot of time against the
sequence length. Only the standard library is used.
"""
import json
import math
import pathlib


def load_criterion(root, groups):
    """Criterion's median time in ns of every variant of `groups`, keyed (group, variant, n),
    from CRITERION/GROUP/VARIANT/N/new/estimates.json."""
    results = {}
    for estimates in pathlib.Path(root).glob("*/*/*/new/estimates.json"):
        group, variant, n = estimates.parts[-5:-2]
        if group in groups and n.isdigit():
            results[(group, variant, int(n))] = json.loads(estimates.read_text())["median"]["point_estimate"]
    return results


def read_json(path, default=None):
    """The JSON value in `path`, or `default` where no path is given or the file is missing."""
    if path and pathlib.Path(path).exists():
        return json.loads(pathlib.Path(path).read_text())
    return default


def read_json_lines(path):
    """The JSON values in `path`, one a line (blank lines skipped); none where it is missing."""
    if path and pathlib.Path(path).exists():
        return [json.loads(line) for line in pathlib.Path(path).read_text().splitlines() if line.strip()]
    return []


def write_text(path, text):
    """Writes `text` to `path`, making its folder first."""
    pathlib.Path(path).parent.mkdir(parents=True, exist_ok=True)
    pathlib.Path(path).write_text(text)


def fmt_time(ns):
    if ns is None:
        return "–"
    ms = ns / 1e6
    if ms >= 100:
        return f"{ms:.0f} ms"
    if ms >= 10:
        return f"{ms:.1f} ms"
    return f"{ms:.2f} ms"


def ratio(a, b):
    return None if a is None or b is None else a / b


def fmt_ratio(r):
    return "–" if r is None else f"{r:.2f}"


def escape(text):
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def loglog_frame(title, ns, values, right):
    """The start of an SVG log-log plot of times in ms (`values`) against the lengths `ns`,
    820 × 470 with `right` pixels for the legend: the title, a line per decade of time and
    per length, the axis label and the frame. Returns the SVG lines so far and the functions
    that place a length (`px`) and a time (`py`)."""
    width, height = 820, 470
    left, top, bottom = 70, 30, 60
    y_lo = 10 ** math.floor(math.log10(min(values)))
    y_hi = 10 ** math.ceil(math.log10(max(values)))
    x_lo, x_hi = math.log2(min(ns)), math.log2(max(ns))
    px = lambda n: left + (math.log2(n) - x_lo) / max(x_hi - x_lo, 1) * (width - left - right)
    py = lambda t: top + (math.log10(y_hi) - math.log10(t)) / max(math.log10(y_hi) - math.log10(y_lo), 1) * (height - top - bottom)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{left}" y="18" font-size="14">{escape(title)}</text>']
    decade = y_lo
    while decade <= y_hi * 1.0001:
        y = py(decade)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{width - right}" y2="{y:.1f}" stroke="#dddddd"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{decade:g} ms</text>')
        decade *= 10
    for n in ns:
        x = px(n)
        out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{height - bottom}" stroke="#eeeeee"/>')
        out.append(f'<text x="{x:.1f}" y="{height - bottom + 18}" text-anchor="middle">{n}</text>')
    out.append(f'<text x="{(left + width - right) / 2:.0f}" y="{height - 20}" text-anchor="middle">'
               f'sequence length n (log scale)</text>')
    out.append(f'<rect x="{left}" y="{top}" width="{width - left - right}" height="{height - top - bottom}" '
               f'fill="none" stroke="#444444"/>')
    return out, px, py, (y_lo, y_hi)
