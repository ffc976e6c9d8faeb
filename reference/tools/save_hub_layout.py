#!/usr/bin/env python3
"""Writes the real model as the Hugging Face Hub holds it: a folder with config.json,
model.safetensors, tokenizer.json and tokenizer_config.json, made by transformers from
the GGUF file, so that chapter 20's safetensors path can be run on
the real model without the Hub:

    python reference/tools/save_hub_layout.py [--gguf GGUF] [--dtype float32|bfloat16] OUT
    cargo run -p ch20-real-model -- --model OUT --prompt "The capital of France is"

With float32 (the default) the weights are the GGUF's, dequantised, and the chapter's
tokens must equal those it gives on the GGUF file itself; bfloat16 is the Hub's own type
for this model, with other weights and so possibly other tokens.
"""
import argparse
import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

import torch  # noqa: E402
from safetensors.torch import save_file  # noqa: E402
from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT = os.path.join(HERE, "..", "..", "models", "SmolLM2-135M-Instruct.Q4_1.gguf")

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("out")
parser.add_argument("--gguf", default=os.environ.get("ATTN_MODEL", DEFAULT))
parser.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32")
args = parser.parse_args()

folder, name = os.path.split(os.path.abspath(args.gguf))
dtype = getattr(torch, args.dtype)
model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
# transformers refuses to save a model it loaded from a GGUF file (`save_pretrained` sees a
# quantisation), so the folder is written as `save_pretrained` lays it out: the config
# without the GGUF's quantisation, and the parameters by name, the tied output head left
# out as the Hub's checkpoints leave it out.
config = model.config
if hasattr(config, "quantization_config"):
    del config.quantization_config
config.dtype = args.dtype
os.makedirs(args.out, exist_ok=True)
config.save_pretrained(args.out)
state = {k: v.to(dtype).contiguous() for k, v in model.state_dict().items()}
if config.tie_word_embeddings:
    state.pop("lm_head.weight", None)
save_file(state, os.path.join(args.out, "model.safetensors"), metadata={"format": "pt"})
AutoTokenizer.from_pretrained(folder, gguf_file=name).save_pretrained(args.out)
print("wrote", args.out, "in", args.dtype)
