"""Chapter 22: the saved model read by transformers (PyTorch reference).

`cargo run -p ch22-pretraining -- --save DIR` writes the trained Llama in the layout the
Hugging Face Hub keeps (config.json, model.safetensors, tokenizer.json). This script loads
such a folder with transformers' AutoModelForCausalLM and AutoTokenizer, as anyone would,
and prints for each prompt its ids, transformers' greedy continuation to the end of the
model's context, and the logits after the prompt's last token (float32 bits), which
chapter 20's loader must reproduce on the same folder (tests/export_check.rs: the same
tokens, the logits within the rounding).

Without --dir, the folder is the small model of the chapter's export tests, trained and
saved by `cargo run -p ch22-pretraining --example export_tiny -- DIR SEED` (SEED = 1
unless --seed S); its output is chapters/ch22-pretraining/tests/fixtures/export_check.txt:

    python reference/ch22_export_check.py > chapters/ch22-pretraining/tests/fixtures/export_check.txt
"""
import argparse
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import torch
import transformers
from transformers import AutoModelForCausalLM, AutoTokenizer

assert torch.__version__.startswith("2.13.0"), torch.__version__
torch.set_grad_enabled(False)
torch.set_num_threads(1)
transformers.logging.set_verbosity_error()

PROMPTS = ["the cat", "a dog met"]
ROOT = Path(__file__).resolve().parent.parent


def bits(values):
    return " ".join(f"{struct.unpack('<I', struct.pack('<f', v))[0]:08x}" for v in values)


def check(folder, seed):
    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    model.eval()
    c = model.config
    print("# Chapter 22: the saved model, read by transformers")
    print()
    print(f"seed {seed}")
    print(
        f"{type(model).__name__}: vocab {c.vocab_size}, hidden {c.hidden_size}, layers "
        f"{c.num_hidden_layers}, heads {c.num_attention_heads}, kv heads "
        f"{c.num_key_value_heads}, intermediate {c.intermediate_size}, context "
        f"{c.max_position_embeddings}, tied {c.tie_word_embeddings}"
    )
    for prompt in PROMPTS:
        ids = tok(prompt, add_special_tokens=False)["input_ids"]
        x = torch.tensor([ids])
        new = c.max_position_embeddings - len(ids)
        out = model.generate(
            x, max_new_tokens=new, do_sample=False, eos_token_id=None, pad_token_id=0
        )[0, len(ids):].tolist()
        logits = model(x).logits[0, -1]
        print()
        print(f"prompt {prompt!r}")
        print("ids " + " ".join(map(str, ids)))
        print("greedy " + " ".join(map(str, out)))
        print(f"text {tok.decode(ids + out)!r}")
        print("last logits " + bits(logits.tolist()))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--dir", type=Path, help="a folder saved by the chapter")
    args = parser.parse_args()
    if args.dir is not None:
        check(args.dir, args.seed)
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "tiny"
        subprocess.run(
            ["cargo", "run", "-q", "-p", "ch22-pretraining", "--example", "export_tiny", "--",
             str(folder), str(args.seed)],
            cwd=ROOT, check=True, stdout=subprocess.DEVNULL,
        )
        check(folder, args.seed)


if __name__ == "__main__":
    sys.exit(main())
