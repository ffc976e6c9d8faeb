#!/usr/bin/env bash
# Chapter 9's benchmarks next to PyTorch's, in one run. criterion times the chapters'
# attention variants, the flash kernel and, through the `tch` feature in the same groups
# and the same process, libtorch 2.13.0's F.scaled_dot_product_attention and its plain
# matmul/mask/softmax path (chapters/ch09-flash-attention/benches/attention/); the
# paired example times the kernel and SDPA in turns, call by call (a ratio that a slow spell
# of a shared machine cannot tilt); chapter 11's paired_step example times one training
# step of its model against PyTorch's same step (autograd and libtorch's AdamW) the same
# way, and the paired_matmul example `shared`'s large matrix products against libtorch's;
# the fma_peak example measures one core's peak; the peak_memory example measures resident
# memory; perf/scripts/bench_table.py prints the
# tables, writes the book's table and plot (book/src/bench/ch09-flash-attention.{md,svg})
# and ends with the lines
#   matmul shared/torch throughput ratio: square X.XX, module products Y.YY to Z.ZZ
#   module/pytorch time ratio: n=1024 X.XX, n=4096 Y.YY
#   module 2-thread speed-up: n=1024 X.XX, n=4096 Y.YY
#   flash forward+backward 2-thread speed-up: n=1024 X.XX, n=4096 Y.YY
#   flash/sdpa forward+backward time ratio: n=1024 X.XX, n=4096 Y.YY (error ratio E.EE, F.FF)
#   ch11 training step ours/pytorch time ratio: X.XX
#   flash/sdpa time ratio: n=1024 X.XX, n=4096 Y.YY
# (time ratios below 1: ours is faster; throughput ratios above 1; speed-ups are one thread's time ÷ two threads'; see
# bench_table.py). Everything runs on one thread except the `threads` group, the 2-thread
# variants of the `module` and `backward` groups and the memory measurement.
#
#   bash perf/scripts/bench-vs-torch.sh                      # everything (about 20 minutes)
#   CH09_BENCH_NS="1024 4096" CH09_BENCH_GROUPS="core_causal core_full" bash perf/scripts/bench-vs-torch.sh
#   CH09_BENCH_NS=128 CH09_BENCH_SECONDS=0.2 bash perf/scripts/bench-vs-torch.sh --out DIR   # a smoke run
#   CH09_BENCH_PROFILE=dev CH09_BENCH_MEMORY_N=512 ...   # a smoke run on the tests' build
#
# CH09_BENCH_PROFILE (default bench, an optimised build) names the cargo profile; `dev`
# reuses the build of scripts/test-tch.sh, so a smoke run that checks the script and its
# tables end to end (CI's) builds little. Its times mean nothing. CH09_BENCH_MEMORY_N
# (default 4096) is the length of the peak-memory runs.
#
# --out DIR writes the table and plot into DIR instead of the book. The first run makes
# .venv-libtorch (scripts/libtorch-env.sh: python3 with venv, and the package index) and
# builds the bench with tch in target/tch. Numbers taken while other programs run are
# noisy: the table records the load average before and after.
set -euo pipefail
cd "$(dirname "$0")/../.."

page=book/src/bench
if [ "${1:-}" = "--out" ]; then
  page=${2:?"--out needs a directory"}
fi
# shellcheck source=scripts/libtorch-env.sh
source scripts/libtorch-env.sh >&2
# The same target directory as scripts/test-tch.sh, so the tch build is made once; absolute,
# because criterion puts its results under it and runs the bench in perf/
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target/tch}
# The chapters' variants run on our own code; PyTorch's call libtorch directly.
export SHARED_DEVICE=cpu

ns=${CH09_BENCH_NS:-"128 512 1024 2048 4096"}
groups=${CH09_BENCH_GROUPS:-"core_causal core_full module threads backward"}
out=$CARGO_TARGET_DIR/ch09-bench
mkdir -p "$out" "$page"
rm -rf "$CARGO_TARGET_DIR"/criterion/{core_causal,core_full,module,threads,backward}

profile=${CH09_BENCH_PROFILE:-bench}
case $profile in
  dev) bin=$CARGO_TARGET_DIR/debug ;;
  bench) bin=$CARGO_TARGET_DIR/release ;;
  *) bin=$CARGO_TARGET_DIR/$profile ;;
esac
memory_n=${CH09_BENCH_MEMORY_N:-4096}

echo "==> building the bench and the examples with tch (profile $profile)" >&2
# The packages of every tch build (tch_selection, scripts/libtorch-env.sh): in the dev profile
# everything but perf's own targets and criterion is scripts/test-tch.sh's build.
tch_features=(--features shared/tch,attention-perf/tch)
cargo bench -q --profile "$profile" "${tch_selection[@]}" "${tch_features[@]}" --bench attention --no-run
cargo build --profile "$profile" -q "${tch_selection[@]}" "${tch_features[@]}" --example peak_memory_ch09 --example paired \
  --example paired_matmul --example fma_peak --example paired_step
# CH09_BENCH_BUILD_ONLY=1: the builds only (CI makes them ahead of the run).
if [ "${CH09_BENCH_BUILD_ONLY:-}" = 1 ]; then exit 0; fi

# While timing, glibc's malloc keeps the memory it is given back, on both sides (libtorch
# allocates through it too). By default whether freed megabytes go back to the OS between
# calls depends on which thread allocated them and on what ran before, and a call then
# faults its buffers' pages in afresh: a fifth of a forward and backward pass's time in
# some processes, nothing in others. The memory measurement below runs without it.
keep_memory=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=268435456
export GLIBC_TUNABLES=$keep_memory

load_before=$(cut -d' ' -f1 /proc/loadavg)
echo "==> criterion: $groups at n = $ns" >&2
filter="^($(echo "$groups" | tr ' ' '|'))/"
CH09_BENCH_NS="$ns" cargo bench -q --profile "$profile" "${tch_selection[@]}" "${tch_features[@]}" --bench attention \
  -- "$filter" 2>&1 | grep -E '^[a-z_0-9]+/|time:' >&2

echo "==> flash and SDPA timed in turns, call by call, forward and forward+backward (the paired example)" >&2
# shellcheck disable=SC2086 # the lengths are its arguments
"$bin"/examples/paired $ns > "$out/paired.jsonl"
cat "$out/paired.jsonl" >&2

echo "==> shared's large matrix products and libtorch's, timed in turns (the paired_matmul example)" >&2
# The module's token counts among the lengths measured (the first length in a smoke run).
matmul_ns=$(for n in $ns; do case $n in 1024|4096) echo "$n" ;; esac; done)
# shellcheck disable=SC2086 # the token counts are its arguments
"$bin"/examples/paired_matmul ${matmul_ns:-${ns%% *}} > "$out/matmul.jsonl"
cat "$out/matmul.jsonl" >&2

echo "==> chapter 11's training step, ours and PyTorch's, timed in turns (the paired_step example)" >&2
# As long as criterion measures one variant: a fraction of a second in a smoke run.
"$bin"/examples/paired_step "${CH09_BENCH_SECONDS:-3}" > "$out/step.jsonl"
cat "$out/step.jsonl" >&2

unset GLIBC_TUNABLES
echo "==> peak memory (flash at b = 8 and b = 1, materialised at b = 1)" >&2
memory_runs=("flash 8 $memory_n" "flash 1 $memory_n" "materialised 1 $memory_n")
for run in "${memory_runs[@]}"; do
  # shellcheck disable=SC2086 # the run's words are its arguments
  "$bin"/examples/peak_memory_ch09 $run
done > "$out/memory.jsonl"
cat "$out/memory.jsonl" >&2
load_after=$(cut -d' ' -f1 /proc/loadavg)

isa=$("$bin"/examples/peak_memory_ch09 isa)
# One core's FMA peak, the yardstick of the useful GFLOP/s in the tables.
fma_peak=$("$bin"/examples/fma_peak | sed -n 's/^fma peak: \([0-9.]*\) GFLOP.*/\1/p')
python3 - "$out/meta.json" "$load_before" "$load_after" "$isa" "$libtorch_version" "$fma_peak" "$keep_memory" <<'PY'
import datetime, json, subprocess, sys
path, before, after, isa, torch, fma_peak, keep_memory = sys.argv[1:8]
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
    "torch": f"libtorch {torch} through tch", "isa": isa,
    "load_before": before, "load_after": after, "fma_peak_gflops": float(fma_peak),
    "malloc": "glibc's malloc keeping freed memory (GLIBC_TUNABLES=" + keep_memory + ")",
    "commit": run("git", "rev-parse", "--short", "HEAD"),
}, open(path, "w"))
PY

python3 perf/scripts/bench_table.py --criterion "$CARGO_TARGET_DIR/criterion" \
  --memory "$out/memory.jsonl" --paired "$out/paired.jsonl" --matmul "$out/matmul.jsonl" --step "$out/step.jsonl" \
  --meta "$out/meta.json" \
  --md "$page/ch09-flash-attention.md" --svg "$page/ch09-flash-attention.svg"
