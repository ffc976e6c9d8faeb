"""Chapter 1: from words to vectors (PyTorch reference).

Sources: seed 000 (six hand-made 3-d embeddings), seed 004 (Raschka: vocabulary,
token ids and a seeded Embedding(6, 16)), seed 001 (Politi: token ids [2, 6, 8, 3, 1]
and a seeded Embedding(10, 16)).

Gradients are switched off for the whole script (the same as running it inside
`with torch.no_grad():`), so tensors print without `grad_fn=...`: the Rust side
tracks no gradients. Each step prints a `## ...` heading, its output and one
empty line.
"""
import argparse

import torch

torch.set_grad_enabled(False)  # same effect as wrapping everything in torch.no_grad()

# `--seed S` seeds every torch.manual_seed call below with S instead of the article's
# seed (the chapter binary takes the same flag), so the two can be compared on any seed.
def seed_value(text):
    """A seed as torch.manual_seed accepts it and the chapter binary too: 0 to 2**64 - 1."""
    seed = int(text)
    if not 0 <= seed < 2**64:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 2**64 - 1")
    return seed


parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--seed", type=seed_value, metavar="S",
                    help="use S for every manual_seed call instead of the article's seeds")
SEED = parser.parse_args().seed


def seed_or(article_seed):
    """The seed where the article uses `article_seed`: S if --seed S was given."""
    return article_seed if SEED is None else SEED


print("# Chapter 1: Embeddings")
print()

# --- Seed 000: an already-embedded sentence, one 3-d vector per word ---
print('## "Your journey starts with one step" as six 3-d vectors')
inputs = torch.tensor(
    [[0.43, 0.15, 0.89],    # Your
    [0.55, 0.87, 0.66],     # journey
    [0.57, 0.85, 0.64],     # starts
    [0.22, 0.58, 0.33],     # with
    [0.77, 0.25, 0.10],     # one
    [0.05, 0.80, 0.55]]     # step
)
print(inputs)
print(inputs.shape)
print()

# --- Seed 004: vocabulary, token ids, embedding layer ---
print('## Vocabulary of "Life is short, eat dessert first"')
sentence = 'Life is short, eat dessert first'

dc = {s:i for i,s in enumerate(sorted(sentence.replace(',', '').split()))}
print(dc)
print()

print("## Token ids")
sentence_int = torch.tensor([dc[s] for s in sentence.replace(',', '').split()])
print(sentence_int)
print()

print(f"## Embedding(6, 16) after manual_seed({seed_or(123)})")
torch.manual_seed(seed_or(123))
embed = torch.nn.Embedding(6, 16)
embedded_sentence = embed(sentence_int).detach()

print(embedded_sentence)
print(embedded_sentence.shape)
print()

# --- Seed 001: token ids of "my name is marcello politi", Embedding(10, 16) ---
print('## Token ids of "my name is marcello politi"')
tokenized_sentence = torch.tensor([
    2, #my
    6, #name
    8, #is
    3, #marcello
    1  #politi
])
print(tokenized_sentence)
print()

print(f"## Embedding(10, 16) after manual_seed({seed_or(0)})")
torch.manual_seed(seed_or(0)) # set a fixed seed for reproducibility
embed = torch.nn.Embedding(10, 16)
sentence_embed = embed(tokenized_sentence).detach()
print(sentence_embed)
print(sentence_embed.shape)
print()
