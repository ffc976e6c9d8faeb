"""Turns the results of perf/scripts/bench-part4.sh into tables, plots and headline lines.

    python3 perf/scripts/part4_table.py --criterion target/tch/criterion --ch19 R.json \
        --memory M.json --meta META.json --md OUT.md --svg-window W.svg --svg-linear L.svg

Reads criterion's medians of chapter 16's benchmarks (perf/benches/flex/: groups
flex_window, flex_documents, flex_causal, flex_vs_torch, flex_threads) and of chapter 18's
(perf/benches/linear/: groups linear, dsa, dsa_long and gdn), and the
timing of chapter 19's training run against the reference script's (in turns, one JSON
object). Writes a Markdown fragment with one anchor per table, two log-log plots (the
window's time against n; linear attention's forms against the causal flash kernel), prints
the tables, then the headline lines:

    flex window time slope over n=1024..32768: X.XX (n·w is 1.00); time per visible pair, largest ÷ smallest: S.SS
    flex documents time ÷ Σ Lᵢ², relative to one document: 2 X.XX, 4 Y.YY, ...
    flex causal / ch09 flash causal time ratio: n=1024 X.XX, n=4096 Y.YY
    flex window / torch sdpa with a boolean mask time ratio: n=1024 X.XX, n=4096 Y.YY
    flex window / torch formula time ratio: n=1024 X.XX, n=4096 Y.YY
    flex 2-thread speed-up: n=4096 X.XX (the kernel has no threads of its own)
    linear/softmax crossover: n≈N
    dsa/dense time ratio: n=4096 X.XX, n=8192 Y.YY
    dsa block selection/dense time ratio: n=4096 X.XX, n=8192 Y.YY
    dsa kernel/dense, 8 heads, time ratio: n=4096 X.XX, ..., n=32768 Y.YY
    gdn chunked/token-by-token time ratio: n=256 X.XX, ..., n=4096 Y.YY
    ch19 training run ours/pytorch: 1 thread X.XX, 2 threads Y.YY

With --memory M.json (bench-part4.sh's group memory), a table of each form's peak memory,
each in its own process, and one line per claim of the chapters about what a form holds:

    peak memory of the call ÷ <the claim's size> (<the claim>): <form> n=N X.XX, ...

Time ratios below 1: ours (the first named) is faster. The slope is the least-squares slope
of log(time) against log(n). The crossover is where chapter 18's chunked linear attention
becomes faster than chapter 9's causal flash kernel, interpolated on log-log axes between the
two lengths around it. Only the standard library is used (and bench_common.py, beside this
script).
"""
import argparse
import math
import sys

from bench_common import (escape, fmt_ratio, fmt_time, load_criterion, loglog_frame, ratio,
                          read_json, write_text)

HEADS, HEAD_DIM, WINDOW, TILE = 2, 64, 256, 128
CHUNK, TOP_K, INDEX_HEADS, D_INDEX = 64, 2048, 4, 32
LONG_HEADS, QUERY_TILE = 8, 64

VARIANTS = {
    "flex_window": [("ch16_flex", "ch16: flex_kernel_fused, causal window of 256")],
    "flex_documents": [("ch16_flex", "ch16: flex_kernel_fused, document mask")],
    "flex_causal": [
        ("ch16_flex", "ch16: flex_kernel_fused, causal mask_mod"),
        ("ch16_flex_exact", "ch16: flex_kernel (the listing's bits), causal mask_mod"),
        ("ch09_flash", "ch09: flash_attention, causal"),
    ],
    "flex_vs_torch": [
        ("ch16_flex", "ch16: flex_kernel_fused (block mask, tiles skipped)"),
        ("ch16_formula", "ch16: flex_attention, the formula (n × n scores)"),
        ("torch_sdpa_mask", "PyTorch: F.scaled_dot_product_attention, boolean mask"),
        ("torch_formula", "PyTorch: matmul, masked_fill, softmax, matmul"),
    ],
    "flex_threads": [
        ("ch16_flex_1t", "ch16: flex_kernel_fused, 1 thread"),
        ("ch16_flex_2t", "ch16: flex_kernel_fused, 2 threads"),
        ("torch_sdpa_mask_1t", "PyTorch: SDPA with the boolean mask, 1 thread"),
        ("torch_sdpa_mask_2t", "PyTorch: SDPA with the boolean mask, 2 threads"),
    ],
    "linear": [
        ("ch18_parallel", "ch18: linear_parallel (T × T weights)"),
        ("ch18_recurrent", "ch18: linear_recurrent (a token at a time)"),
        ("ch18_chunked", f"ch18: linear_chunked_fast (chunks of {CHUNK}, products through the GEMM)"),
        ("ch18_chunked_listing", f"ch18: linear_chunked, the listing (chunks of {CHUNK})"),
        ("ch09_flash", "ch09: flash_attention, causal softmax"),
    ],
    "dsa": [
        ("ch18_dsa", f"ch18: DSA (index_scores, top_k_kept, sparse_attention), k = {TOP_K}"),
        ("ch18_sparse_attention", "ch18: sparse_attention alone, kept keys given"),
        ("ch18_dsa_tiles", f"ch18: block selection (index_scores, top_k_tiles_kept, sparse_attention_tiled), "
                           f"{TOP_K // 128} tiles of 128"),
        ("ch09_flash", "ch09: flash_attention, dense causal softmax"),
    ],
    "dsa_long": [
        ("ch18_dsa_kernel", f"ch18: dsa_kernel_fast (queries in tiles of {QUERY_TILE}, k = {TOP_K})"),
        ("ch18_dsa_kernel_listing", "ch18: dsa_kernel, the listing"),
        ("ch09_flash", "ch09: flash_attention, dense causal softmax"),
    ],
    "gdn": [
        ("ch18_gdn_chunked", f"ch18: gated_delta_chunked_fast (chunks of {CHUNK}, products through the GEMM)"),
        ("ch18_gdn_chunked_listing", f"ch18: gated_delta_chunked, the listing (chunks of {CHUNK})"),
        ("ch18_gdn_recurrent", "ch18: gated_delta_recurrent (a token at a time)"),
    ],
}

TITLES = {
    "flex_window": f"Chapter 16's kernel with a causal sliding window of {WINDOW} keys: "
                   f"q, k, v of [1, {HEADS}, n, {HEAD_DIM}], tiles of {TILE}, one thread",
    "flex_documents": "The document mask at one length cut into equal documents (the column is "
                      "the number of documents), one thread",
    "flex_causal": "The causal mask: the generic kernel against chapter 9's, one thread",
    "flex_vs_torch": "The causal window of 256: the kernel, the formula and PyTorch without "
                     "FlexAttention's compiler, one thread",
    "flex_threads": "The causal window of 256 on one and on two threads",
    "linear": f"Causal attention of one head of {HEAD_DIM}, q, k, v of [T, {HEAD_DIM}], one thread",
    "dsa": f"DeepSeek Sparse Attention against dense causal attention: one head of {HEAD_DIM}, "
           f"an indexer of {INDEX_HEADS} heads of {D_INDEX}, one thread",
    "dsa_long": f"DeepSeek Sparse Attention with no T × T matrix against dense causal attention: "
                f"{LONG_HEADS} query heads of {HEAD_DIM} over one key and value per token, an indexer "
                f"of {INDEX_HEADS} heads of {D_INDEX}, one thread",
    "gdn": f"Gated DeltaNet, one head, q, k, v of [T, {HEAD_DIM}], one thread",
}



def columns(results, group):
    return sorted({n for (g, _, n) in results if g == group})


def table(results, group, column_name="n", extra=None):
    """One group's table of median times, `extra(variant, n, time)` appended in brackets."""
    ns = columns(results, group)
    present = [(v, label) for v, label in VARIANTS[group] if any((group, v, n) in results for n in ns)]
    if not present:
        return not_measured(group)
    lines = [f"<!-- ANCHOR: {group} -->", f"**{TITLES[group]}** (median time)", "",
             "| variant | " + " | ".join(f"{column_name} = {n}" for n in ns) + " |",
             "|---|" + "---:|" * len(ns)]
    for v, label in present:
        cells = []
        for n in ns:
            t = results.get((group, v, n))
            cell = fmt_time(t)
            if t is not None and extra:
                cell += extra(v, n, t)
            cells.append(cell)
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines + ["", f"<!-- ANCHOR_END: {group} -->", ""]


def not_measured(anchor):
    """An anchor that a page can include although this run left its table out."""
    return [f"<!-- ANCHOR: {anchor} -->", "(not measured in this run)", f"<!-- ANCHOR_END: {anchor} -->", ""]


def window_pairs(n):
    """The pairs the causal window lets through in one head: n·w less the first triangle."""
    return n * WINDOW - WINDOW * (WINDOW - 1) // 2 if n >= WINDOW else n * (n + 1) // 2


def slope(points):
    """Least-squares slope of log(time) against log(n)."""
    if len(points) < 2:
        return None
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(t) for _, t in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den if den else None


def series(results, group, variant):
    return [(n, results[(group, variant, n)]) for n in columns(results, group) if (group, variant, n) in results]


def crossover(results):
    """The length where chunked linear attention becomes faster than the flash kernel, on
    log-log axes between the lengths around it; (n, how) with how one of 'between',
    'below' (faster at every length measured), 'none' (slower at every length)."""
    pairs = [(n, results[("linear", "ch18_chunked", n)] / results[("linear", "ch09_flash", n)])
             for n in columns(results, "linear")
             if ("linear", "ch18_chunked", n) in results and ("linear", "ch09_flash", n) in results]
    if not pairs:
        return None, "none"
    if pairs[0][1] < 1:
        return pairs[0][0], "below"
    for (n0, r0), (n1, r1) in zip(pairs, pairs[1:]):
        if r0 >= 1 > r1:
            # log(ratio) is linear in log(n) between the two: where it is 0.
            f = math.log(r0) / (math.log(r0) - math.log(r1))
            return round(math.exp(math.log(n0) + f * (math.log(n1) - math.log(n0)))), "between"
    return pairs[-1][0], "none"


def memory_lines(ns):
    """What each form holds besides its inputs and output, computed (not measured)."""
    if not ns:
        return not_measured("memory")
    d = HEAD_DIM
    rows = [
        (f"linear attention's state S and z (d × d + d), recurrent and chunked", lambda n: (d * d + d) * 4),
        (f"the chunked form's weights of one chunk (C × C, C = {CHUNK})", lambda n: CHUNK * CHUNK * 4),
        ("the parallel form's weights, and the materialised softmax's scores (T × T)", lambda n: n * n * 4),
        ("softmax attention's KV cache for generating the next token (2 × T × d)", lambda n: 2 * n * d * 4),
    ]
    def size(b):
        for unit, scale in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
            if b >= scale:
                return f"{b / scale:.3g} {unit}"
        return f"{b} B"
    lines = ["<!-- ANCHOR: memory -->",
             f"**What each form holds, in float32, one head of {d}** (computed from the shapes, not measured)", "",
             "| held | " + " | ".join(f"T = {n}" for n in ns) + " |", "|---|" + "---:|" * len(ns)]
    for label, bytes_of in rows:
        lines.append(f"| {label} | " + " | ".join(size(bytes_of(n)) for n in ns) + " |")
    return lines + ["", "<!-- ANCHOR_END: memory -->", ""]


# Peak memory, each form in its own process (bench-part4.sh's group memory, the chapters'
# examples peak_memory): what the call added to the process's resident memory at its
# fullest, against what the chapter says the form holds.
MIB = 2 ** 20
# Form (as the examples name it) -> (short name, the claim, bytes the claim predicts from
# the length n and the output's bytes). Chapter 18's kept keys are booleans, a byte each.
PEAK_CLAIMS = {
    "ch16/window": ("ch16 window", "no n × n matrix", lambda n, out: out),
    "ch16/documents": ("ch16 documents", "no n × n matrix", lambda n, out: out),
    "ch16/causal": ("ch16 causal", "no n × n matrix", lambda n, out: out),
    "ch16/flash-causal": ("ch09 flash, 2 heads", "no n × n matrix", lambda n, out: out),
    "ch16/formula": ("ch16 formula", "the n × n scores of every head",
                     lambda n, out: 4 * HEADS * n * n),
    "ch16/torch-sdpa-mask": ("torch sdpa with the mask", "an n × n mask", lambda n, out: n * n),
    "ch16/torch-formula": ("torch formula", "the n × n scores of every head",
                           lambda n, out: 4 * HEADS * n * n),
    "ch18/parallel": ("ch18 parallel", "the T × T weights", lambda n, out: 4 * n * n),
    "ch18/recurrent": ("ch18 recurrent", "a d × d state", lambda n, out: out + (HEAD_DIM ** 2 + HEAD_DIM) * 4),
    "ch18/chunked": ("ch18 chunked", "a d × d state",
                     lambda n, out: out + (HEAD_DIM ** 2 + HEAD_DIM + CHUNK ** 2) * 4),
    "ch18/flash-causal": ("ch09 flash, 1 head", "no n × n matrix", lambda n, out: out),
    "ch18/dsa": ("ch18 DSA as written", "every T × T matrix: index scores, kept keys, main scores",
                 lambda n, out: (4 + 1 + 4) * n * n),
    "ch18/dsa-tiles": ("ch18 block selection", "the indexer's T × T scores and kept keys",
                       lambda n, out: (4 + 1) * n * n),
    "ch18/dsa-kernel": ("ch18 dsa_kernel", "no n × n matrix", lambda n, out: out),
    "ch18/flash-8-heads": ("ch09 flash, 8 heads", "no n × n matrix", lambda n, out: out),
}
# How each claim's size is written in the table.
PEAK_CLAIM_SIZES = {
    "no n × n matrix": "about its output, O(n·d)",
    "the n × n scores of every head": f"4·{HEADS}·n² bytes",
    "an n × n mask": "n² bytes, as booleans",
    "the T × T weights": "4·T² bytes",
    "a d × d state": "its output and the state",
    "every T × T matrix: index scores, kept keys, main scores": "(4 + 1 + 4)·T² bytes",
    "the indexer's T × T scores and kept keys": "(4 + 1)·T² bytes",
}


def peak_claim(form):
    """The claim about `form` (`ch16/documents-16` is `ch16/documents`), or None."""
    return PEAK_CLAIMS.get(form) or PEAK_CLAIMS.get(form.rsplit("-", 1)[0] if "documents" in form else "")


def peak_memory_lines(runs):
    """The table of the peak memory of each form, each in its own process."""
    if not runs:
        return not_measured("peak_memory")
    lines = ["<!-- ANCHOR: peak_memory -->",
             "**Peak memory, each form in its own process** (one call on one thread; peak: the "
             "process's peak resident memory, Linux's VmHWM, reset just before the call; before the "
             "call: what the process held then, the program, libtorch and the inputs; above: peak − "
             "before, what the call needed at its fullest, its output included)", "",
             "| form | n | time | peak | before the call | above | inputs | output | what the chapter says "
             "it holds | that is | above ÷ that |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|"]
    for r in runs:
        claim = peak_claim(r["form"])
        above = r["peak_bytes"] - r["before_bytes"]
        mib = lambda b: f"{b / MIB:.1f} MiB"
        cells = [f"`{r['form']}`", str(r["n"]), f"{r['seconds']:.3g} s", mib(r["peak_bytes"]),
                 mib(r["before_bytes"]), mib(above), mib(r["inputs_bytes"]), mib(r["output_bytes"])]
        if claim:
            _, said, size = claim
            predicted = size(r["n"], r["output_bytes"])
            cells += [f"{said}: {PEAK_CLAIM_SIZES[said]}", mib(predicted), fmt_ratio(above / predicted)]
        else:
            cells += ["–", "–", "–"]
        lines.append("| " + " | ".join(cells) + " |")
    return lines + ["", "<!-- ANCHOR_END: peak_memory -->", ""]


def print_peak_memory_ratios(runs):
    """One line per claim: each form's peak above what it held before ÷ what the claim says."""
    by_claim = {}
    for r in runs:
        claim = peak_claim(r["form"])
        if claim:
            short, said, size = claim
            above = r["peak_bytes"] - r["before_bytes"]
            by_claim.setdefault(said, []).append(
                f"{short} n={r['n']} {fmt_ratio(above / size(r['n'], r['output_bytes']))}")
    for said, cells in by_claim.items():
        print(f"peak memory of the call ÷ {PEAK_CLAIM_SIZES[said]} ({said}): " + ", ".join(cells))


def ch19_by_threads(run):
    """[(threads, timing)] of a chapter 19 result; a result from before the runs were timed
    on one and two threads has one timing, on the threads each side chose ("default")."""
    if not run:
        return []
    if "threads" in run:
        return sorted(((int(t), timing) for t, timing in run["threads"].items()))
    return [("default", run)]


def ch19_lines(run):
    if not run:
        return not_measured("ch19")
    lines = ["<!-- ANCHOR: ch19 -->",
             f"**Chapter 19's training run, ours and the reference script's, timed in turns** "
             f"(whole processes: `{run['ours_command']}` and `{run['torch_command']}`; "
             f"{run['rounds']} round(s), each running both in one order or the reverse; medians over the "
             f"rounds; " + ("both sides on the same threads: `RAYON_NUM_THREADS` for ours, `--threads` "
                           "for the script's `torch.set_num_threads`)" if "threads" in run else
                           "PyTorch on the threads the script sets, ours on the threads it uses by default)")]
    if "date" in run:
        lines.append(f"Measured {run['date']} on {run['cpu']} ({run['cores']} cores), load average "
                     f"{run['load_before']} before, {run['load_after']} after; commit {run['commit']}.")
    lines += ["",
              "| threads | ours | PyTorch | ratio (median of the rounds') |", "|---:|---:|---:|---:|"]
    for threads, timing in ch19_by_threads(run):
        lines.append(f"| {threads} | {timing['ours_s']:.1f} s | {timing['torch_s']:.1f} s | {timing['ratio']:.2f} |")
    return lines + ["", "<!-- ANCHOR_END: ch19 -->", ""]


def svg_loglog(title, lines, path, guide=None):
    """A log-log plot of time (ms) against n; `lines` is [(label, [(n, ms)], dashed)], `guide`
    an optional (label, slope) reference line through the first line's first point."""
    values = [t for _, pts, _ in lines for _, t in pts]
    ns = sorted({n for _, pts, _ in lines for n, _ in pts})
    if not values:
        return
    width, right, top = 820, 300, 30
    out, px, py, (y_lo, y_hi) = loglog_frame(title, ns, values, right)
    colours = ["#1f77b4", "#d62728", "#ff7f0e", "#2ca02c", "#9467bd", "#999999"]
    legend = list(lines)
    if guide and lines and lines[0][1]:
        label, power = guide
        n0, t0 = lines[0][1][0]
        pts = [(n, t0 * (n / n0) ** power) for n in ns]
        pts = [(n, t) for n, t in pts if y_lo <= t <= y_hi]
        legend.append((label, pts, "guide"))
    for i, (label, pts, dashed) in enumerate(legend):
        colour = "#999999" if dashed == "guide" else colours[i % len(colours)]
        dash = ' stroke-dasharray="6 4"' if dashed else ""
        if len(pts) > 1:
            line = " ".join(f"{px(n):.1f},{py(t):.1f}" for n, t in pts)
            out.append(f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>')
        if dashed != "guide":
            for n, t in pts:
                out.append(f'<circle cx="{px(n):.1f}" cy="{py(t):.1f}" r="3" fill="{colour}"/>')
        ly = top + 14 + 24 * i
        out.append(f'<line x1="{width - right + 14}" y1="{ly}" x2="{width - right + 40}" y2="{ly}" '
                   f'stroke="{colour}" stroke-width="2"{dash}/>')
        out.append(f'<text x="{width - right + 46}" y="{ly + 4}" font-size="11">{escape(label)}</text>')
    out.append("</svg>")
    write_text(path, "\n".join(out) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--criterion", default="target/tch/criterion")
    parser.add_argument("--ch19")
    parser.add_argument("--memory")
    parser.add_argument("--meta")
    parser.add_argument("--meta-partial")
    parser.add_argument("--md")
    parser.add_argument("--svg-window")
    parser.add_argument("--svg-linear")
    args = parser.parse_args()

    results = load_criterion(args.criterion, VARIANTS)
    run = read_json(args.ch19)
    # A run of some groups on a machine that never ran them all has no meta.json.
    meta = read_json(args.meta, {})
    partial = read_json(args.meta_partial)
    peak_runs = read_json(args.memory, [])
    if not results and not run and not peak_runs:
        sys.exit("part4_table.py: no results (run perf/scripts/bench-part4.sh)")

    head = ["<!-- ANCHOR: machine -->"]
    if meta:
        head.append(f"Measured {meta.get('date', '?')} on {meta.get('cpu', '?')} ({meta.get('cores', '?')} cores), "
                    f"{meta.get('rustc', '?')}, {meta.get('torch', '?')}; load average {meta.get('load_before', '?')} "
                    f"before, {meta.get('load_after', '?')} after; commit {meta.get('commit', '?')}.")
    if partial:
        head.append(f"The group(s) {', '.join(partial.get('groups', []))} measured again {partial.get('date', '?')} on "
                    f"the same machine, load average {partial.get('load_before', '?')} before, "
                    f"{partial.get('load_after', '?')} after; commit {partial.get('commit', '?')}.")
    head += ["<!-- ANCHOR_END: machine -->", ""]

    # Time per visible pair of the window, in nanoseconds: flat if the time is linear in n·w.
    def per_pair(v, n, t):
        return f" ({t / (HEADS * window_pairs(n)):.2f} ns/pair)"
    body = table(results, "flex_window", extra=per_pair)
    doc_n = meta.get("doc_n")
    def per_square(v, docs, t):
        if not doc_n:
            return ""
        length = doc_n // docs
        return f" ({t / (HEADS * docs * length * (length + 1) / 2):.2f} ns/pair)"
    body += table(results, "flex_documents", column_name="documents", extra=per_square)
    for group in ("flex_causal", "flex_vs_torch", "flex_threads"):
        body += table(results, group)
    body += table(results, "linear", column_name="T")
    body += memory_lines(columns(results, "linear"))
    body += table(results, "dsa", column_name="T")
    body += table(results, "dsa_long", column_name="T")
    body += table(results, "gdn", column_name="T")
    body += ch19_lines(run)
    body += peak_memory_lines(peak_runs)
    text = "\n".join(head + body)
    if args.md:
        write_text(args.md, text)
    window = series(results, "flex_window", "ch16_flex")
    if args.svg_window:
        svg_loglog(f"Sliding window of {WINDOW}, [1, {HEADS}, n, {HEAD_DIM}], one thread: median time",
                   [("ch16: flex_kernel_fused, causal window", [(n, t / 1e6) for n, t in window], False)],
                   args.svg_window, guide=("time ∝ n (slope 1)", 1))
    if args.svg_linear:
        lines = [(label, [(n, t / 1e6) for n, t in series(results, "linear", v)], v == "ch09_flash")
                 for v, label in VARIANTS["linear"]]
        svg_loglog(f"Causal attention, one head of {HEAD_DIM}, one thread: median time",
                   [line for line in lines if line[1]], args.svg_linear)
    shown = "\n".join(line for line in text.splitlines() if "ANCHOR" not in line)
    print(shown.replace("\n\n\n", "\n\n"))

    def n_range(points):
        return f"n={points[0][0]}..{points[-1][0]}" if points else "n=–"
    s = slope(window)
    # The goal is flat time per visible pair: its largest over its smallest across lengths.
    per_pair = [t / (HEADS * window_pairs(n)) for n, t in window]
    spread = max(per_pair) / min(per_pair) if per_pair else None
    print(f"flex window time slope over {n_range(window)}: {fmt_ratio(s)} (n·w is 1.00); time per visible "
          "pair, largest ÷ smallest: " + ("–" if spread is None else f"{spread:.2f}") + " (within 1.2: "
          + ("–" if spread is None else ("yes" if spread <= 1.2 else "no")) + ")")
    docs = series(results, "flex_documents", "ch16_flex")
    if docs and doc_n:
        base = docs[0][1] / (doc_n ** 2 / docs[0][0])
        cells = [f"{d} {t / (doc_n ** 2 / d) / base:.2f}" for d, t in docs]
        print(f"flex documents time ÷ Σ Lᵢ², relative to {docs[0][0]} document(s): " + ", ".join(cells))
    def pair_line(what, group, a, b, ns):
        cells = [f"n={n} {fmt_ratio(ratio(results.get((group, a, n)), results.get((group, b, n))))}" for n in ns]
        print(f"{what} time ratio: " + ", ".join(cells))
    pair_line("flex causal / ch09 flash causal", "flex_causal", "ch16_flex", "ch09_flash",
              columns(results, "flex_causal") or [1024, 4096])
    torch_ns = columns(results, "flex_vs_torch") or [1024, 4096]
    pair_line("flex window / torch sdpa with a boolean mask", "flex_vs_torch", "ch16_flex", "torch_sdpa_mask", torch_ns)
    pair_line("flex window / torch formula", "flex_vs_torch", "ch16_flex", "torch_formula", torch_ns)
    thread_ns = columns(results, "flex_threads")
    cells = [f"n={n} {fmt_ratio(ratio(results.get(('flex_threads', 'ch16_flex_1t', n)), results.get(('flex_threads', 'ch16_flex_2t', n))))}"
             for n in thread_ns[-1:]]
    print("flex 2-thread speed-up: " + (", ".join(cells) or "–") + " (the kernel has no threads of its own)")
    n, how = crossover(results)
    if how == "between":
        print(f"linear/softmax crossover: n≈{n}")
    elif how == "below":
        print(f"linear/softmax crossover: n≤{n} (chunked faster at every length measured)")
    else:
        print(f"linear/softmax crossover: none up to n={n if n else '–'}")
    pair_line("dsa/dense", "dsa", "ch18_dsa", "ch09_flash", columns(results, "dsa") or [4096])
    pair_line("dsa block selection/dense", "dsa", "ch18_dsa_tiles", "ch09_flash", columns(results, "dsa") or [4096])
    pair_line(f"dsa kernel/dense, {LONG_HEADS} heads,", "dsa_long", "ch18_dsa_kernel", "ch09_flash",
              columns(results, "dsa_long") or [4096])
    pair_line("gdn chunked/token-by-token", "gdn", "ch18_gdn_chunked", "ch18_gdn_recurrent",
              columns(results, "gdn") or [1024])
    ratios = {threads: timing["ratio"] for threads, timing in ch19_by_threads(run)}
    cells = [f"{t} thread{'s' if t > 1 else ''} {fmt_ratio(ratios.get(t))}" for t in (1, 2)]
    if "default" in ratios:
        cells = [f"each side's default threads {fmt_ratio(ratios['default'])}"]
    print("ch19 training run ours/pytorch: " + ", ".join(cells))
    print_peak_memory_ratios(peak_runs)


if __name__ == "__main__":
    main()
