"""Turns the results of perf/scripts/bench-vs-torch.sh into tables and a plot.

    python3 perf/scripts/bench_table.py --criterion target/tch/criterion \
        --memory M.jsonl --paired P.jsonl --step S.jsonl --matmul X.jsonl --meta META.json \
        --md OUT.md --svg OUT.svg

Reads criterion's medians (CRITERION/GROUP/VARIANT/N/new/estimates.json: the chapters'
variants and, from the bench's `tch` feature, PyTorch's), the paired example's timings in
turns, chapter 11's training step against PyTorch's (the paired_step example), the large
matrix products against libtorch's (the paired_matmul example) and the peak-memory
measurements (one JSON object a line each) and a few facts about the machine.
Writes a Markdown page fragment (the book's benchmark table) and an SVG plot of the causal
core, prints the tables, then the headline lines:

    matmul shared/torch throughput ratio: square X.XX, module products Y.YY to Z.ZZ
    module/pytorch time ratio: n=1024 X.XX, n=4096 Y.YY
    module 2-thread speed-up: n=1024 X.XX, n=4096 Y.YY
    flash forward+backward 2-thread speed-up: n=1024 X.XX, n=4096 Y.YY
    flash/sdpa forward+backward time ratio: n=1024 X.XX, n=4096 Y.YY (error ratio E.EE, F.FF)
    ch11 training step ours/pytorch time ratio: X.XX
    flash/sdpa time ratio: n=1024 X.XX, n=4096 Y.YY

The first line, where the paired_matmul example ran, is the throughput of `shared`'s large
products over libtorch's, timed in turns (above 1: ours is faster): the square product of
the largest size measured, and the lowest and highest over the module's projections. The
second is the causal multi-head module with the flash core over PyTorch's module around
SDPA, from criterion's medians.

The speed-ups are one thread's time ÷ two threads' (above 1: the second core helps): the
causal module's (projections, flash core, output projection) from criterion's medians, the
forward and backward pass's timed in turns where the paired example ran, else criterion's.
The third line, where the paired example also timed training, is the forward and the
backward pass, ours against SDPA through autograd, with the ratio of the gradients' largest
errors against double precision (ours ÷ SDPA's). The fourth, where the paired_step example
ran, is one training step of chapter 11's model, ours against PyTorch's same step. The last
line is the chapter's kernel through its Tensor API against torch's
scaled_dot_product_attention with is_causal=True: the median of the paired example's
per-round ratios where it ran, else the ratio of criterion's medians. The time ratios are
on one thread; below 1 means ours is faster.

On a machine that others share, criterion's medians of two variants are taken seconds apart,
in different states of the machine; the rounds timed in turns see both sides in the same
state. Both are in the table. Only the standard library is used (and bench_common.py, beside
this script).
"""
import argparse
import sys

from bench_common import (escape, fmt_ratio, fmt_time, load_criterion, loglog_frame, ratio,
                          read_json, read_json_lines, write_text)

HEADS, HEAD_DIM = 12, 64

VARIANTS = {
    "core_causal": [
        ("ch05_masked_softmax", "ch05: matmul, masked softmax, matmul"),
        ("ch07_sdpa", "ch07: scaled_dot_product_attention (materialised)"),
        ("ch09_flash", "ch09: flash_attention (Tensor in and out)"),
        ("ch09_flash_slices", "ch09: flash_attention_slices (the kernel alone)"),
        ("torch_sdpa", "PyTorch: F.scaled_dot_product_attention(is_causal=True)"),
        ("torch_matmul_softmax", "PyTorch: matmul, masked_fill, softmax, matmul"),
    ],
    "core_full": [
        ("ch02_loops", "ch02: loops of dot products (unscaled)"),
        ("ch04_matmul", "ch04: matmul, scaled softmax, matmul"),
        ("ch09_flash", "ch09: flash_attention, no mask"),
        ("torch_sdpa", "PyTorch: F.scaled_dot_product_attention"),
        ("torch_matmul_softmax", "PyTorch: matmul, softmax, matmul"),
    ],
    "module": [
        ("ch06_wrapper", "ch06: MultiHeadAttentionWrapper (12 heads in turn)"),
        ("ch07_split", "ch07: MultiHeadAttention"),
        ("ch09_flash", "ch09: ch07's module with the flash core"),
        ("ch09_flash_2t", "ch09: the same, 2 threads"),
        ("torch_sdpa", "PyTorch: the same module with F.scaled_dot_product_attention"),
        ("torch_sdpa_2t", "PyTorch: the same, 2 threads"),
        ("torch_matmul_softmax", "PyTorch: the same module, matmul and softmax"),
    ],
    "threads": [
        ("ch09_flash_1t", "ch09: flash_attention, 1 thread"),
        ("ch09_flash_2t", "ch09: flash_attention, 2 threads"),
        ("torch_sdpa_1t", "PyTorch: F.scaled_dot_product_attention, 1 thread"),
        ("torch_sdpa_2t", "PyTorch: F.scaled_dot_product_attention, 2 threads"),
    ],
    "backward": [
        ("ch09_flash_1t", "ch09: flash_attention_lse + flash_attention_backward, 1 thread"),
        ("ch09_flash_2t", "ch09: the same, 2 threads"),
        ("torch_sdpa_1t", "PyTorch: F.scaled_dot_product_attention + autograd, 1 thread"),
        ("torch_sdpa_2t", "PyTorch: the same, 2 threads"),
    ],
}

TITLES = {
    "core_causal": "Causal attention core: q, k, v of [1, 12, n, 64], one thread",
    "core_full": "Attention core without the mask, one thread",
    "module": "Causal multi-head module, d_model = 768 (projections included), one thread unless marked",
    "threads": "The causal core on one and on two threads",
    "backward": "Causal attention's forward and backward pass (a training step's), one and two threads",
}




def useful_gflops(group, n, ns):
    full = 4 * HEADS * n * n * HEAD_DIM
    flops = full if group == "core_full" else full / 2
    return flops / ns




def tables(results, ns, peak=None):
    """Markdown tables, one per group: median times, and useful GFLOP/s for the cores (with
    the fraction of one core's FMA peak, `peak` GFLOP/s, where it was measured)."""
    lines = []
    for group, variants in VARIANTS.items():
        present = [(v, label) for v, label in variants if any((group, v, n) in results for n in ns)]
        if not present:
            continue
        useful = "useful GFLOP/s and the fraction of the FMA peak" if peak else "useful GFLOP/s"
        note = f" (median time, {useful} in brackets)" if group.startswith("core") else " (median time)"
        # Each table has an anchor of its own, so that a page can show one of them.
        lines += [f"<!-- ANCHOR: {group} -->", f"**{TITLES[group]}**{note}", ""]
        lines.append("| variant | " + " | ".join(f"n = {n}" for n in ns) + " |")
        lines.append("|---|" + "---:|" * len(ns))
        for v, label in present:
            cells = []
            for n in ns:
                t = results.get((group, v, n))
                cell = fmt_time(t)
                if t is not None and group.startswith("core"):
                    gflops = useful_gflops(group, n, t)
                    cell += f" ({gflops:.0f}, {gflops / peak:.0%})" if peak else f" ({gflops:.0f})"
                cells.append(cell)
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        lines += [f"<!-- ANCHOR_END: {group} -->", ""]
    return lines


def speedups(results, train, n):
    """One thread's time ÷ two threads' at length n: (the causal module's, the forward and
    backward pass's). The module's from criterion's medians; the forward and backward's
    timed in turns where the paired example ran, else criterion's."""
    get = lambda g, v: results.get((g, v, n))
    module = ratio(get("module", "ch09_flash"), get("module", "ch09_flash_2t"))
    if n in train:
        return module, train[n]["speedup"]
    return module, ratio(get("backward", "ch09_flash_1t"), get("backward", "ch09_flash_2t"))


def ratios(results, memory, paired, train, step, products):
    """The headline ratios: (what, measured)."""
    get = lambda g, v, n: results.get((g, v, n))
    rows = []
    for p in products:
        rows.append((f"shared's {p['product']} ÷ PyTorch's, as throughput, {p['m']} × {p['k']} × {p['n']}, "
                     "timed in turns", p["ratio"]))
    for n in (1024, 4096):
        rows.append((f"the causal module with the flash core ÷ PyTorch's module with SDPA, n = {n}",
                     ratio(get("module", "ch09_flash", n), get("module", "torch_sdpa", n))))
    for n in (1024, 4096):
        rows.append((f"flash ÷ PyTorch SDPA, causal, n = {n}",
                     ratio(get("core_causal", "ch09_flash", n), get("core_causal", "torch_sdpa", n))))
        if n in paired:
            rows.append((f"the same, timed in turns (median of {paired[n]['rounds']} per-round ratios), n = {n}",
                         paired[n]["ratio"]))
        rows.append((f"(the kernel alone, slices) ÷ PyTorch SDPA, n = {n}",
                     ratio(get("core_causal", "ch09_flash_slices", n), get("core_causal", "torch_sdpa", n))))
    rows.append(("flash ÷ ch07's materialised core, n = 4096",
                 ratio(get("core_causal", "ch09_flash", 4096), get("core_causal", "ch07_sdpa", 4096))))
    rows.append(("flash causal ÷ flash without mask, n = 4096",
                 ratio(get("core_causal", "ch09_flash", 4096), get("core_full", "ch09_flash", 4096))))
    if 4096 in paired and "causal_over_full" in paired[4096]:
        rows.append((f"the same, timed in turns (median of {paired[4096]['rounds']} per-round ratios)",
                     paired[4096]["causal_over_full"]))
    for m in memory:
        if m.get("variant") == "flash" and m.get("batch") == 8 and m.get("n") == 4096:
            rows.append((f"peak extra memory ÷ output, b = 8, n = 4096 ({m['extra_peak_mib']:.0f} MiB "
                         f"for {m['output_mib']:.0f} MiB, {m['threads']} threads)", m["ratio"]))
    for n in (1024, 4096):
        rows.append((f"the flash core, one thread ÷ two threads (speed-up), n = {n}",
                     ratio(get("threads", "ch09_flash_1t", n), get("threads", "ch09_flash_2t", n))))
        if n in paired and "speedup" in paired[n]:
            rows.append((f"the same, timed in turns (median of {paired[n]['rounds']} per-round ratios), n = {n}",
                         paired[n]["speedup"]))
    for n in (1024, 4096):
        rows.append((f"the module, one thread ÷ two threads (speed-up), n = {n}",
                     ratio(get("module", "ch09_flash", n), get("module", "ch09_flash_2t", n))))
        rows.append((f"PyTorch's module with SDPA, one thread ÷ two threads, n = {n}",
                     ratio(get("module", "torch_sdpa", n), get("module", "torch_sdpa_2t", n))))
        rows.append((f"forward + backward, one thread ÷ two threads (speed-up, criterion's medians), n = {n}",
                     ratio(get("backward", "ch09_flash_1t", n), get("backward", "ch09_flash_2t", n))))
    for n, t in sorted(train.items()):
        rows.append((f"forward + backward ÷ PyTorch SDPA's through autograd, causal, timed in turns, n = {n}",
                     t["ratio"]))
        rows.append((f"the backward's gradient error ÷ SDPA's (largest of dq, dk, dv, against double), n = {n}",
                     t["error_ratio"]))
        rows.append((f"forward + backward, one thread ÷ two threads (speed-up), n = {n}", t["speedup"]))
    if step:
        rows.append((f"chapter 11's training step ÷ PyTorch's same step, timed in turns "
                     f"(median of {step['rounds']} per-round ratios)", step["ratio"]))
    return rows


def train_lines(train):
    if not train:
        return []
    lines = ["<!-- ANCHOR: train -->", "**Forward and backward timed in turns** (causal, one thread: ours is `flash_attention_lse` "
             "then `flash_attention_backward`, PyTorch's is SDPA's forward and backward through autograd; "
             "medians over the rounds; the errors are the largest relative to each gradient's largest entry, "
             "against SDPA in double precision, the worst of dq, dk, dv)", "",
             "| n | rounds | ch09 forward + backward | PyTorch SDPA + autograd | ratio | ch09 on 2 threads "
             "| speed-up | ch09 gradient error | SDPA gradient error | error ratio |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for n, t in sorted(train.items()):
        lines.append(f"| {n} | {t['rounds']} | {fmt_time(t['flash_ms'] * 1e6)} | {fmt_time(t['sdpa_ms'] * 1e6)} | "
                     f"{t['ratio']:.2f} | {fmt_time(t['two_threads_ms'] * 1e6)} | {t['speedup']:.2f} | "
                     f"{t['grad_error']:.2e} | {t['sdpa_grad_error']:.2e} | {t['error_ratio']:.2f} |")
    return lines + ["<!-- ANCHOR_END: train -->", ""]


def matmul_lines(products, peak):
    if not products:
        return []
    of_peak = " and the fraction of one core's FMA peak" if peak else ""
    lines = ["<!-- ANCHOR: matmul -->", "**Large matrix products, timed in turns** (one thread; ours is `shared`'s `matmul`, "
             "PyTorch's is libtorch's, MKL's `sgemm`; a projection is `x·Wᵀ` as `nn.Linear` computes it, "
             f"with `W` of `[out, in]`; GFLOP/s{of_peak} in brackets; the ratio is ours ÷ PyTorch's "
             "throughput, the median of the rounds' ratios: above 1, ours is faster)", "",
             "| product | m × k × n | rounds | shared | PyTorch | ratio |", "|---|---|---:|---:|---:|---:|"]
    def cell(gflops):
        return f"{gflops:.0f} GFLOP/s ({gflops / peak:.0%})" if peak else f"{gflops:.0f} GFLOP/s"
    for p in products:
        lines.append(f"| {p['product']} | {p['m']} × {p['k']} × {p['n']} | {p['rounds']} | "
                     f"{cell(p['ours_gflops'])} | {cell(p['torch_gflops'])} | {p['ratio']:.2f} |")
    return lines + ["<!-- ANCHOR_END: matmul -->", ""]


def matmul_headline(products):
    """(the square product's ratio at its largest size, the lowest and highest projection's)."""
    square = [p for p in products if p["product"] == "square matmul"]
    projections = [p["ratio"] for p in products if p["product"] != "square matmul"]
    square_ratio = max(square, key=lambda p: p["m"])["ratio"] if square else None
    low = min(projections) if projections else None
    high = max(projections) if projections else None
    return square_ratio, low, high


def step_lines(step):
    if not step:
        return []
    diff = f"{step['param_diff']:.1e} ({step['param_diff_of']})" if step["param_diff"] else "0"
    return ["**One training step of chapter 11's model, timed in turns** (16 sequences of 8 tokens, "
            "d_model = 16, 2 heads; one thread; ours is `train_step`: the forward pass, cross-entropy, "
            "the backward pass and AdamW written by hand; PyTorch's is the reference script's step on "
            "libtorch: the same model, weights and batch, autograd's backward and libtorch's AdamW; "
            f"each round times {step['steps_per_turn']} steps of each side, in one order or the reverse; "
            "medians over the rounds. The losses and the largest difference between the parameters are "
            "those after the chapter's first step, as a check that both sides compute the same step)", "",
            "| rounds | ours per step | PyTorch per step | ratio | loss, ours | loss, PyTorch "
            "| largest parameter difference |",
            "|---:|---:|---:|---:|---:|---:|---|",
            f"| {step['rounds']} | {step['ours_us']:.0f} µs | {step['torch_us']:.0f} µs | {step['ratio']:.2f} | "
            f"{step['loss_ours']:.7f} | {step['loss_torch']:.7f} | {diff} |", ""]


def paired_lines(paired):
    if not paired:
        return []
    lines = ["**Flash and PyTorch's SDPA timed in turns** (causal, one thread; each round times one call "
             "of each, of the kernel without the mask and of the kernel on two threads, in one order or the "
             "reverse; medians over the rounds, the fastest round in brackets; the ratios are medians of the "
             "rounds' ratios)", "",
             "| n | rounds | ch09 flash_attention | PyTorch SDPA | ratio | ch09 without mask | causal ÷ full "
             "| ch09 on 2 threads | speed-up |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for n, p in sorted(paired.items()):
        two = (f"{fmt_time(p['two_threads_ms'] * 1e6)} | {p['speedup']:.2f}" if "speedup" in p else "– | –")
        lines.append(f"| {n} | {p['rounds']} | {fmt_time(p['flash_ms'] * 1e6)} ({fmt_time(p['fastest_flash_ms'] * 1e6)}) | "
                     f"{fmt_time(p['sdpa_ms'] * 1e6)} ({fmt_time(p['fastest_sdpa_ms'] * 1e6)}) | {p['ratio']:.2f} | "
                     f"{fmt_time(p['full_ms'] * 1e6)} | {p['causal_over_full']:.2f} | {two} |")
    return lines + [""]


def memory_lines(memory):
    if not memory:
        return []
    lines = ["**Peak extra resident memory of one causal call** (12 heads of 64)", "",
             "| variant | batch | n | output | extra peak | ratio |", "|---|---:|---:|---:|---:|---:|"]
    for m in memory:
        lines.append(f"| {m['variant']} | {m['batch']} | {m['n']} | {m['output_mib']:.0f} MiB | "
                     f"{m['extra_peak_mib']:.0f} MiB | {m['ratio']:.2f} |")
    return lines + [""]


def svg_plot(results, ns, path):
    """Log-log plot of the causal core's time against n."""
    series = [(v, label) for v, label in VARIANTS["core_causal"]
              if any(("core_causal", v, n) in results for n in ns)]
    points = {v: [(n, results[("core_causal", v, n)] / 1e6) for n in ns if ("core_causal", v, n) in results]
              for v, _ in series}
    values = [t for pts in points.values() for _, t in pts]
    if not values:
        return
    width, right, top = 820, 340, 30
    title = "Causal attention, [1, 12, n, 64], f32, one thread: median time"
    out, px, py, _ = loglog_frame(title, ns, values, right)
    colours = ["#999999", "#1f77b4", "#d62728", "#ff7f0e", "#2ca02c", "#9467bd"]
    for i, (v, label) in enumerate(series):
        colour = colours[i % len(colours)]
        dash = ' stroke-dasharray="6 4"' if v.startswith("torch") else ""
        pts = " ".join(f"{px(n):.1f},{py(t):.1f}" for n, t in points[v])
        out.append(f'<polyline points="{pts}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>')
        for n, t in points[v]:
            out.append(f'<circle cx="{px(n):.1f}" cy="{py(t):.1f}" r="3" fill="{colour}"/>')
        ly = top + 14 + 34 * i
        out.append(f'<line x1="{width - right + 14}" y1="{ly}" x2="{width - right + 40}" y2="{ly}" '
                   f'stroke="{colour}" stroke-width="2"{dash}/>')
        name, _, rest = label.partition(": ")
        out.append(f'<text x="{width - right + 46}" y="{ly + 4}">{name}:</text>')
        out.append(f'<text x="{width - right + 46}" y="{ly + 18}" font-size="11">{escape(rest)}</text>')
    out.append("</svg>")
    write_text(path, "\n".join(out) + "\n")



def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--criterion", default="target/criterion")
    parser.add_argument("--memory")
    parser.add_argument("--paired")
    parser.add_argument("--step")
    parser.add_argument("--matmul")
    parser.add_argument("--meta")
    parser.add_argument("--md")
    parser.add_argument("--svg")
    args = parser.parse_args()

    results = load_criterion(args.criterion, VARIANTS)
    memory = read_json_lines(args.memory)
    paired, train = {}, {}
    for p in read_json_lines(args.paired):
        (train if p.get("pass") == "forward+backward" else paired)[p["n"]] = p
    step = read_json(args.step)
    products = read_json_lines(args.matmul)
    meta = read_json(args.meta, {})
    ns = sorted({n for (_, _, n) in results})
    if not ns:
        sys.exit("bench_table.py: no results (run perf/scripts/bench-vs-torch.sh)")

    head = ["<!-- ANCHOR: machine -->"]
    if meta:
        head.append(f"Measured {meta.get('date', '?')} on {meta.get('cpu', '?')} ({meta.get('cores', '?')} cores, "
                    f"{meta.get('isa', '?')} kernel), {meta.get('rustc', '?')}, {meta.get('torch', '?')}; load average {meta.get('load_before', '?')} before, "
                    f"{meta.get('load_after', '?')} after; commit {meta.get('commit', '?')}.")
        if meta.get("malloc"):
            head += ["", f"Timed with {meta['malloc']}, our thread pools' threads pinned one to a core."]
        if meta.get("fma_peak_gflops"):
            head += ["", f"One core's FMA peak (16 independent chains of fused multiply-adds, the "
                     f"`fma_peak` example): {meta['fma_peak_gflops']:.0f} GFLOP/s."]
    head += ["<!-- ANCHOR_END: machine -->", ""]
    body = ["<!-- ANCHOR: tables -->"] + tables(results, ns, meta.get("fma_peak_gflops")) + paired_lines(paired) + train_lines(train)
    body += step_lines(step)
    body += matmul_lines(products, meta.get("fma_peak_gflops"))
    body += memory_lines(memory)
    body += ["<!-- ANCHOR_END: tables -->", "", "<!-- ANCHOR: ratios -->"]
    rows = ratios(results, memory, paired, train, step, products)
    body += ["| ratio | measured |", "|---|---:|"]
    body += [f"| {what} | {fmt_ratio(r)} |" for what, r in rows]
    body += ["<!-- ANCHOR_END: ratios -->", ""]
    text = "\n".join(head + body)
    if args.md:
        write_text(args.md, text)
    if args.svg:
        svg_plot(results, ns, args.svg)
    print("\n".join(line for line in text.splitlines() if "ANCHOR" not in line))
    # The headline ratio: timed in turns where the paired example ran (each round sees the
    # machine in the same state for both), else criterion's medians, taken seconds apart.
    def get(n):
        if n in paired:
            return paired[n]["ratio"]
        return ratio(results.get(("core_causal", "ch09_flash", n)), results.get(("core_causal", "torch_sdpa", n)))
    if products:
        square, low, high = matmul_headline(products)
        print(f"matmul shared/torch throughput ratio: square {fmt_ratio(square)}, "
              f"module products {fmt_ratio(low)} to {fmt_ratio(high)}")
    module_ratio = [ratio(results.get(("module", "ch09_flash", n)), results.get(("module", "torch_sdpa", n)))
                    for n in (1024, 4096)]
    print(f"module/pytorch time ratio: n=1024 {fmt_ratio(module_ratio[0])}, n=4096 {fmt_ratio(module_ratio[1])}")
    module, backward = zip(*(speedups(results, train, n) for n in (1024, 4096)))
    print(f"module 2-thread speed-up: n=1024 {fmt_ratio(module[0])}, n=4096 {fmt_ratio(module[1])}")
    print(f"flash forward+backward 2-thread speed-up: n=1024 {fmt_ratio(backward[0])}, "
          f"n=4096 {fmt_ratio(backward[1])}")
    if train:
        def train_get(n, key):
            return train[n][key] if n in train else None
        print(f"flash/sdpa forward+backward time ratio: n=1024 {fmt_ratio(train_get(1024, 'ratio'))}, "
              f"n=4096 {fmt_ratio(train_get(4096, 'ratio'))} (error ratio "
              f"{fmt_ratio(train_get(1024, 'error_ratio'))}, {fmt_ratio(train_get(4096, 'error_ratio'))})")
    if step:
        print(f"ch11 training step ours/pytorch time ratio: {fmt_ratio(step['ratio'])}")
    print(f"flash/sdpa time ratio: n=1024 {fmt_ratio(get(1024))}, n=4096 {fmt_ratio(get(4096))}")


if __name__ == "__main__":
    main()
