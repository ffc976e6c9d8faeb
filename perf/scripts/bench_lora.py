#!/usr/bin/env python3
"""Times chapter 23's training step against PyTorch + PEFT's, in turns (see perf/scripts/bench-lora.sh).

The recipe of the chapter's committed adapter on SmolLM2: rank 8 and alpha 16 beside all
seven projections of every layer, batches of 8 training sums drawn from the seeded
generator and padded as the chapter and reference/ch23_lora.py do, the loss on the answers'
tokens, AdamW from learning rate 0.002 falling in a straight line. Each round runs, for 1
and 2 threads, PyTorch + PEFT (transformers, float32, eager attention; this script with
--side pytorch) in a fresh process, then the chapter's step (perf/examples/speed_lora.rs,
RAYON_NUM_THREADS) in a fresh process, then PyTorch training the same seven projections'
own weights instead of adapters (--side pytorch-full: what LoRA spares). Each side runs --warmup steps untimed and times the
next --steps steps one by one, wall clock and processor time (user and system, all
threads); a side's time is the median of its steps, and over the rounds the median of
those. The peak resident memory is the whole process's (the model loaded in float32, the
adapters, the optimizer, the activations of a step), as wait4 reports it. The timing
itself uses only the standard library; --side pytorch imports the reference script.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
# chapters/ch23-lora/src/setup.rs: TRAIN_TARGETS and LR (RANK, ALPHA, BATCH and SEED are
# the reference script's own).
TRAIN_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
LR = 2e-3


def pytorch_side(model_path, threads, warmup, steps, full):
    """The PyTorch + PEFT steps, timed in this process; prints one line of JSON. With
    `full`, no adapters: the same projections' own weights train (what LoRA spares)."""
    sys.path.insert(0, os.path.join(ROOT, "reference"))
    import ch23_lora as ref  # noqa: E402 (sets one thread: the next line sets ours)
    import torch  # noqa: E402
    from peft import LoraConfig, get_peft_model  # noqa: E402

    torch.set_num_threads(threads)
    base, encoder = ref.real(model_path)
    config = LoraConfig(r=ref.RANK, lora_alpha=ref.ALPHA, target_modules=TRAIN_TARGETS,
                        lora_dropout=0.0, task_type="CAUSAL_LM")
    if full:
        model = base
        for name, parameter in model.named_parameters():
            parameter.requires_grad_(name.split(".")[-2] in TRAIN_TARGETS)
    else:
        model = get_peft_model(base, config)
    torch.manual_seed(ref.SEED)
    train_sums, _ = ref.split()
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=LR)
    total = warmup + steps
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: (total - s) / total)
    ends = [(time.perf_counter(), time.process_time())]
    for _ in range(total):
        picks = torch.randint(0, len(train_sums), (ref.BATCH,)).tolist()
        ids, labels = ref.batch([encoder.example(train_sums[i]) for i in picks], encoder.eos)
        loss = ref.answer_loss(model(input_ids=ids).logits, labels)
        loss.backward()
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        loss.item()
        ends.append((time.perf_counter(), time.process_time()))
    timed = ends[warmup:]
    print(json.dumps({
        "wall_s": [b[0] - a[0] for a, b in zip(timed, timed[1:])],
        "processor_s": [b[1] - a[1] for a, b in zip(timed, timed[1:])],
        "threads": torch.get_num_threads(),
    }))


def run_side(command, env):
    """Runs `command` in a fresh process: its JSON line and its peak resident memory."""
    # Both outputs go to files: wait4 (which reaps the process and reports its resources)
    # returns only once the process ends, and a full pipe would stop it first.
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(command, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(process.pid, 0)
        out.seek(0)
        err.seek(0)
        if status != 0:
            sys.exit(f"{' '.join(command)} failed: {err.read().decode()[-2000:]}")
        line = out.read().decode().strip().splitlines()[-1]
    return json.loads(line), usage.ru_maxrss * 1024


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ours", help="perf/examples/speed_lora.rs, built")
    p.add_argument("--python", default=sys.executable)
    p.add_argument("--model", default=os.path.join(ROOT, "models", "SmolLM2-135M-Instruct.Q4_1.gguf"))
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--side", choices=["pytorch", "pytorch-full"],
                   help="run one side's steps in this process")
    a = p.parse_args()
    if a.warmup < 1:
        p.error("--warmup must be at least 1: the first timed step starts where it ends")
    if a.side:
        pytorch_side(a.model, a.threads[0], a.warmup, a.steps, a.side == "pytorch-full")
        return
    if not a.ours:
        p.error("--ours is required (perf/scripts/bench-lora.sh builds it)")
    if not os.path.exists(a.model):
        sys.exit(f"no model at {a.model}: run `bash scripts/get-model.sh` from the workspace root")
    walls, cpus, peaks = {}, {}, {}
    steps = ["--warmup", str(a.warmup), "--steps", str(a.steps)]
    for r in range(a.rounds):
        for threads in a.threads:
            env = dict(os.environ, OMP_NUM_THREADS=str(threads), RAYON_NUM_THREADS=str(threads),
                       ATTN_MODEL=os.path.abspath(a.model))
            for side in ("pytorch", "ours", "pytorch-full"):
                command = ([a.ours] if side == "ours" else [
                    a.python, os.path.abspath(__file__), "--side", side, "--model", a.model,
                    "--threads", str(threads)]) + steps
                line, peak = run_side(command, env)
                walls.setdefault((side, threads), []).append(statistics.median(line["wall_s"]))
                cpus.setdefault((side, threads), []).append(statistics.median(line["processor_s"]))
                peaks[side] = max(peaks.get(side, 0), peak)
            print(f"round {r + 1}, {threads} thread(s) done", file=sys.stderr)

    print(f"One LoRA training step on SmolLM2-135M (rank 8 beside the seven projections, batch "
          f"of 8 sums), medians of {a.steps} steps after {a.warmup} untimed, medians of "
          f"{a.rounds} round(s):\n")
    # The wall clock is what a reader waits; on a machine shared with other work it also
    # measures the others, and the processor time (user and system) is the steadier number.
    print("| threads | wall: PyTorch | ours | ours / PyTorch | processor: PyTorch | ours | ours / PyTorch |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for threads in a.threads:
        row = f"| {threads} "
        for times in (walls, cpus):
            theirs = statistics.median(times[("pytorch", threads)])
            ours = statistics.median(times[("ours", threads)])
            row += f"| {theirs * 1e3:.0f} ms | {ours * 1e3:.0f} ms | {ours / theirs:.2f} "
        print(row + "|")
    print()
    print("| peak resident memory: PyTorch + PEFT | ours |")
    print("|---:|---:|")
    print(f"| {peaks['pytorch'] / 2**20:.0f} MiB | {peaks['ours'] / 2**20:.0f} MiB |")
    print()
    # What LoRA spares: PyTorch training the same seven projections' own weights instead.
    print("PyTorch, the same projections trained in full instead of through adapters:\n")
    print("| threads | wall: full | LoRA / full | processor: full | LoRA / full |")
    print("|---:|---:|---:|---:|---:|")
    for threads in a.threads:
        row = f"| {threads} "
        for times in (walls, cpus):
            full = statistics.median(times[("pytorch-full", threads)])
            lora = statistics.median(times[("pytorch", threads)])
            row += f"| {full * 1e3:.0f} ms | {lora / full:.2f} "
        print(row + "|")
    print(f"\nPeak resident memory, trained in full: {peaks['pytorch-full'] / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()
