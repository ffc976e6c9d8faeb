#!/usr/bin/env bash
# The speed claims of chapters 16, 18 and 19, in one run. criterion times chapter 16's
# FlexAttention kernel (chapters/ch16-flex-attention/benches/flex/: a causal sliding window
# over n, the document mask over the number of documents, the causal mask against chapter
# 9's flash kernel, the window against libtorch 2.13.0's SDPA with a boolean mask and its
# plain formula through the `tch` feature in the same process, one and two threads) and
# chapter 18's forms of attention (chapters/ch18-linear-attention/benches/linear/: causal
# linear attention parallel, recurrent and chunked against chapter 9's causal flash kernel
# over T; DeepSeek Sparse Attention against dense causal attention, as the chapter writes it
# and as a kernel with no T × T matrix at T = 4096 ... 32768; Gated DeltaNet a chunk at a
# time against token by token over T); then chapter 19's
# whole training run (`ch19-induction-heads --train`, release) and the reference script's
# PyTorch run are timed in turns, whole processes, A B then B A, both on one thread
# (RAYON_NUM_THREADS=1, --threads 1), then both on two. perf/scripts/part4_table.py
# prints the tables, writes the book's tables and plots (book/src/bench/part4.md,
# part4-window.svg, part4-linear.svg) and ends with the lines
#   flex window time slope over n=1024..32768: X.XX (n·w is 1.00); time per visible pair, largest ÷ smallest S.SS (...)
#   flex documents time ÷ Σ Lᵢ², relative to 1 document(s): 1 1.00, 2 X.XX, ...
#   flex causal / ch09 flash causal time ratio: n=1024 X.XX, n=4096 Y.YY
#   flex window / torch sdpa with a boolean mask time ratio: n=1024 X.XX, ...
#   flex window / torch formula time ratio: n=1024 X.XX, ...
#   flex 2-thread speed-up: n=4096 X.XX (the kernel has no threads of its own)
#   linear/softmax crossover: n≈N
#   dsa/dense time ratio: n=4096 X.XX, n=8192 Y.YY   (CH18_DSA_NS="4096 8192 16384" adds 16384)
#   dsa block selection/dense time ratio: n=4096 X.XX, n=8192 Y.YY
#   dsa kernel/dense, 8 heads, time ratio: n=4096 X.XX, ..., n=32768 Y.YY
#   gdn chunked/token-by-token time ratio: n=256 X.XX, ..., n=4096 Y.YY
#   ch19 training run ours/pytorch: 1 thread X.XX, 2 threads Y.YY
# (time ratios below 1: ours is faster). Everything runs on one thread except the
# flex_threads group and chapter 19's runs (one thread, then two, on both sides).
#
#   bash perf/scripts/bench-part4.sh                      # everything (about half an hour once built)
#   PART4_GROUPS="flex_window linear" bash perf/scripts/bench-part4.sh --out DIR   # some groups, no ch19
#   PART4_BENCH_SECONDS=0.2 CH16_BENCH_NS="1024 2048" CH16_CAUSAL_NS=512 CH16_TORCH_NS=512 \
#     CH16_DOC_N=1024 CH18_BENCH_NS="256 512" CH18_DSA_NS=1024 CH19_STEPS=20 CH19_ROUNDS=1 \
#     bash perf/scripts/bench-part4.sh --out DIR          # a smoke run (a few minutes once built)
#
# CH19_STEPS=N times, instead of the two whole runs, chapter 19's loss_bits example and the
# reference script for N steps each (a smoke test of the commands; the table names the
# commands it timed). CH19_ROUNDS (default 3) rounds of each. The reference script runs under
# $PYTHON (default .venv/bin/python), which must have torch 2.13.0.
# The group memory runs each form once more, at the longest length its group times, in a
# process of its own (the examples peak_memory of chapters 16 and 18): its peak resident
# memory (Linux's VmHWM) beside its time, in $out/memory.json and a table of its own, and
# lines "peak memory of the call ÷ <what the chapter says the form holds>: ...".
#   PART4_GROUPS=memory bash perf/scripts/bench-part4.sh --out DIR     # the memory group alone
# --out DIR writes the tables and plots into DIR instead of the book. The first run makes
# .venv-libtorch (scripts/libtorch-env.sh; TCH_VENV to use another) and builds the benches
# with tch in target/tch. Numbers taken while other programs run are noisy: the table
# records the load average before and after.
set -euo pipefail
cd "$(dirname "$0")/../.."

page=book/src/bench
if [ "${1:-}" = "--out" ]; then
  page=${2:?"--out needs a directory"}
fi
PYTHON=${PYTHON:-.venv/bin/python}
# shellcheck source=scripts/libtorch-env.sh
source scripts/libtorch-env.sh >&2
# The same target directory as perf/scripts/bench-vs-torch.sh; absolute, because criterion puts
# its results under it and runs the benches in perf/.
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target/tch}
export SHARED_DEVICE=cpu

all_groups="flex_window flex_documents flex_causal flex_vs_torch flex_threads linear dsa dsa_long gdn memory"
groups=${PART4_GROUPS:-"$all_groups ch19"}
out=$CARGO_TARGET_DIR/part4-bench
mkdir -p "$out" "$page"
# Only the groups this run measures are cleared: the tables of the others are rebuilt from
# their last results, and the machine line says which groups were measured later.
for group in $groups; do rm -rf "$CARGO_TARGET_DIR/criterion/$group" "$out/$group.json"; done

echo "==> building the benches (with tch) and chapter 19" >&2
# One cargo call for both benches, so that `shared` is built once, with tch.
benches=(-p attention-perf --features tch --bench flex --bench linear)
cargo bench -q "${benches[@]}" --no-run
cargo build --release -q -p ch19-induction-heads --bin ch19-induction-heads --example loss_bits

# As for chapter 9's benchmarks: glibc's malloc keeps the memory it is given back, on both
# sides, so that no call faults its buffers' pages in afresh.
export GLIBC_TUNABLES=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=268435456
load_before=$(cut -d' ' -f1 /proc/loadavg)
criterion_groups=$(for g in $groups; do case $g in ch19|memory) ;; *) echo "$g" ;; esac; done | tr '\n' ' ')
if [ -n "${criterion_groups// /}" ]; then
  echo "==> criterion: $criterion_groups" >&2
  filter="^($(echo "$criterion_groups" | xargs | tr ' ' '|'))/"
  cargo bench -q "${benches[@]}" -- "$filter" 2>&1 | grep -E '^[a-z_0-9]+/|time:' >&2
fi

# The group memory: each form once, at the longest length its benchmark times, in a process
# of its own (the examples peak_memory_ch16 and peak_memory_ch18), its peak resident memory
# from Linux's VmHWM beside its time. The lengths follow the benchmarks' variables and defaults.
if [[ " $groups " == *" memory "* ]]; then
  echo "==> peak memory: each form at its longest length, in a process of its own" >&2
  longest() { tr ' ' '\n' <<<"$1" | sort -n | tail -1; }
  ch16_window=$(longest "${CH16_BENCH_NS:-32768}")
  ch16_causal=$(longest "${CH16_CAUSAL_NS:-4096}")
  ch16_torch=$(longest "${CH16_TORCH_NS:-4096}")
  ch18_t=$(longest "${CH18_BENCH_NS:-16384}")
  # The parallel form runs up to CH18_PARALLEL_MAX: the longest length at most that.
  ch18_parallel=$(for t in ${CH18_BENCH_NS:-256 512 1024 2048 4096 8192 16384}; do
    if [ "$t" -le "${CH18_PARALLEL_MAX:-8192}" ]; then echo "$t"; fi; done | sort -n | tail -1)
  ch18_dsa=$(longest "${CH18_DSA_NS:-8192}")
  ch18_long=$(longest "${CH18_DSA_LONG_NS:-32768}")
  memory_runs=(
    "16 window $ch16_window" "16 documents ${CH16_DOC_N:-4096}" "16 causal $ch16_causal"
    "16 flash-causal $ch16_causal" "16 formula $ch16_torch" "16 torch-sdpa-mask $ch16_torch"
    "16 torch-formula $ch16_torch" "18 parallel $ch18_parallel" "18 recurrent $ch18_t"
    "18 chunked $ch18_t" "18 flash-causal $ch18_t" "18 dsa $ch18_dsa" "18 dsa-tiles $ch18_dsa"
    "18 dsa-kernel $ch18_long" "18 flash-8-heads $ch18_long"
  )
  # The same features as the benches, so that `shared` is not built again.
  cargo build -q --profile bench -p attention-perf --features tch \
    --example peak_memory_ch16 --example peak_memory_ch18
  # glibc's default malloc, as the chapters' own programs run; a form that fails (memory
  # exhausted) is reported and left out of the table.
  for run in "${memory_runs[@]}"; do
    read -r chapter form n <<<"$run"
    [ -n "$n" ] || continue
    env -u GLIBC_TUNABLES "$CARGO_TARGET_DIR/release/examples/peak_memory_ch$chapter" --form "$form" --n "$n" \
      || echo "peak_memory: ch$chapter $form at n = $n failed" >&2
  done > "$out/memory.jsonl"
  cat "$out/memory.jsonl" >&2
  python3 -c 'import json, sys; json.dump([json.loads(l) for l in open(sys.argv[1]) if l.strip()], open(sys.argv[2], "w"), indent=1)' \
    "$out/memory.jsonl" "$out/memory.json"
fi

if [[ " $groups " == *" ch19 "* ]]; then
  echo "==> chapter 19's training run, ours and PyTorch's, timed in turns on 1 and 2 threads" >&2
  if [ -n "${CH19_STEPS:-}" ]; then
    ours=("$CARGO_TARGET_DIR/release/examples/loss_bits" 7 "$CH19_STEPS")
    torch=("$PYTHON" reference/ch19_induction_heads.py --steps "$CH19_STEPS" --fixed-steps 1 --dump /dev/null)
  else
    ours=("$CARGO_TARGET_DIR/release/ch19-induction-heads" --train)
    torch=("$PYTHON" reference/ch19_induction_heads.py)
  fi
  # Ours keeps its freed memory itself (course/src/process.rs); the
  # reference script runs as a reader runs it.
  unset GLIBC_TUNABLES
  python3 - "$out/ch19.json" "${CH19_ROUNDS:-3}" "${#ours[@]}" "${ours[@]}" "${torch[@]}" <<'PY'
import datetime, json, os, statistics, subprocess, sys, time
path, rounds, n_ours = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def load():
    return open("/proc/loadavg").read().split()[0]
def run(*cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip()
    except Exception:
        return "?"
cpu = next((line.split(":", 1)[1].strip() for line in run("lscpu").splitlines()
            if line.startswith("Model name:")), "?")
ours, torch = sys.argv[4:4 + n_ours], sys.argv[4 + n_ours:]
def seconds(cmd, env):
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True, env=env)
    return time.perf_counter() - start
def short(cmd):
    return " ".join(c.rsplit("/", 1)[-1] if c.startswith("/") else c for c in cmd)
# The machine and its load go with the result: this group is often measured on its own.
result = {"rounds": rounds, "ours_command": short(ours), "torch_command": "python " + " ".join(torch[1:]),
          "threads": {}, "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
          "cpu": cpu, "cores": run("nproc"), "commit": run("git", "rev-parse", "--short", "HEAD"),
          "load_before": load()}
for threads in (1, 2):
    # The same threads on both sides: rayon's pool for ours, torch.set_num_threads for PyTorch.
    sides = {"ours": (ours, dict(os.environ, RAYON_NUM_THREADS=str(threads))),
             "torch": (torch + ["--threads", str(threads)], dict(os.environ))}
    times = {"ours": [], "torch": []}
    for r in range(rounds):
        # One order, then the other: neither side always runs on a machine the other warmed.
        order = ["ours", "torch"] if r % 2 == 0 else ["torch", "ours"]
        for side in order:
            times[side].append(seconds(*sides[side]))
        print(f"{threads} thread(s), round {r + 1}: ours {times['ours'][-1]:.2f} s, "
              f"pytorch {times['torch'][-1]:.2f} s", file=sys.stderr)
    result["threads"][str(threads)] = {
        "ours_s": statistics.median(times["ours"]), "torch_s": statistics.median(times["torch"]),
        "ratio": statistics.median(o / t for o, t in zip(times["ours"], times["torch"]))}
result["load_after"] = load()
json.dump(result, open(path, "w"))
PY
fi
load_after=$(cut -d' ' -f1 /proc/loadavg)

# A run of every group writes meta.json; a run of some (PART4_GROUPS) writes
# meta-partial.json, which the tables name beside the full run's.
meta=$out/meta.json
if [ -n "${PART4_GROUPS:-}" ]; then meta=$out/meta-partial.json; else rm -f "$out/meta-partial.json"; fi
python3 - "$meta" "$load_before" "$load_after" "$libtorch_version" "${CH16_DOC_N:-4096}" "$groups" <<'PY'
import datetime, json, subprocess, sys
path, before, after, torch, doc_n, groups = sys.argv[1:7]
def run(*cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip()
    except Exception:
        return "?"
cpu = "?"
for line in run("lscpu").splitlines():
    if line.startswith("Model name:"):
        cpu = line.split(":", 1)[1].strip()
json.dump({
    "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
    "cpu": cpu, "cores": run("nproc"), "rustc": run("rustc", "--version"),
    "torch": f"libtorch {torch} through tch", "load_before": before, "load_after": after,
    "commit": run("git", "rev-parse", "--short", "HEAD"), "doc_n": int(doc_n),
    "groups": groups.split(),
}, open(path, "w"))
PY

python3 perf/scripts/part4_table.py --criterion "$CARGO_TARGET_DIR/criterion" --ch19 "$out/ch19.json" \
  --memory "$out/memory.json" --meta "$out/meta.json" --meta-partial "$out/meta-partial.json" --md "$page/part4.md" \
  --svg-window "$page/part4-window.svg" --svg-linear "$page/part4-linear.svg"
