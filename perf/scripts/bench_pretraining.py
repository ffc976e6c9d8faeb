#!/usr/bin/env python3
"""Times chapter 22's training step against PyTorch's, in turns (see perf/scripts/bench-pretraining.sh).

Each round runs, for 1 and 2 threads and for each architecture: the reference script
(`reference/ch22_pretraining.py --train --threads T`) in a fresh process, then the chapter's
binary (`--train`, RAYON_NUM_THREADS=T) in a fresh process, each once for a short run and
once for a long one at nanoGPT's baby size. Both runs start the same way (the text read and
encoded, the model built, an evaluation before the first step and one after the last), so
the difference of their wall times divided by the difference of their steps is the time of
one training step, start-up and evaluations left out. The medians over the rounds are
reported as ratios (ours / PyTorch's: below 1, ours is faster), with the peak resident
memory of each side's longer run. Only the standard library is used.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time


def timed(command, env):
    """Wall time in s, processor time (user and system) in s and peak resident memory in
    bytes of `command` in a fresh process."""
    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        sys.exit(f"{' '.join(command)} failed: {process.stderr.read().decode()[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ours", required=True, help="the chapter's binary")
    p.add_argument("--python", default=sys.executable)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--short", type=int, default=10, help="steps of the short run")
    p.add_argument("--long", type=int, default=50, help="steps of the long run")
    p.add_argument("--arch", nargs="+", default=["gpt2", "llama"])
    a = p.parse_args()
    root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    script = os.path.join(root, "reference", "ch22_pretraining.py")
    walls, cpus, peaks = {}, {}, {}
    for r in range(a.rounds):
        for threads in (1, 2):
            env = dict(os.environ, OMP_NUM_THREADS=str(threads), RAYON_NUM_THREADS=str(threads))
            for arch in a.arch:
                for side in ("pytorch", "ours"):
                    for steps in (a.short, a.long):
                        # The evaluations only before the first step and after the last.
                        flags = ["--train", "--arch", arch, "--steps", str(steps), "--eval-every", str(10 ** 6)]
                        command = ([a.python, script, "--threads", str(threads)] if side == "pytorch"
                                   else [a.ours]) + flags
                        wall, cpu, peak = timed(command, env)
                        walls.setdefault((side, arch, threads, steps), []).append(wall)
                        cpus.setdefault((side, arch, threads, steps), []).append(cpu)
                        peaks[(side, arch)] = max(peaks.get((side, arch), 0), peak)
            print(f"round {r + 1}, {threads} thread(s) done", file=sys.stderr)

    def step_time(side, arch, threads, times):
        long = statistics.median(times[(side, arch, threads, a.long)])
        short = statistics.median(times[(side, arch, threads, a.short)])
        return (long - short) / (a.long - a.short)

    print(f"One training step at the baby size (4 layers, width 128, context 64, batch 12), "
          f"from runs of {a.short} and {a.long} steps, medians of {a.rounds} round(s):\n")
    # The wall clock is what a reader waits; on a machine shared with other work it also
    # measures the others, and the processor time (user and system) is the steadier number.
    print("| model | threads | wall: PyTorch | ours | ours / PyTorch | processor: PyTorch | ours | ours / PyTorch |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for arch in a.arch:
        for threads in (1, 2):
            row = f"| {arch} | {threads} "
            for times in (walls, cpus):
                theirs = step_time("pytorch", arch, threads, times)
                ours = step_time("ours", arch, threads, times)
                row += f"| {theirs * 1e3:.0f} ms | {ours * 1e3:.0f} ms | {ours / theirs:.2f} "
            print(row + "|")
    print()
    print("| model | peak resident memory: PyTorch | ours |")
    print("|---|---:|---:|")
    for arch in a.arch:
        print(f"| {arch} | {peaks[('pytorch', arch)] / 2**20:.0f} MiB | {peaks[('ours', arch)] / 2**20:.0f} MiB |")


if __name__ == "__main__":
    main()
