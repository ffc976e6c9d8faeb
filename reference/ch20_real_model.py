#!/usr/bin/env python3
"""Chapter 20's reference: Hugging Face's transformers runs the models the chapter runs.

    python reference/ch20_real_model.py --fixtures
        Tiny random checkpoints (Llama's and Qwen3's architectures), built offline, with a
        tokenizer trained here; transformers' logits for a prompt and its greedy tokens; a
        tiny GGUF file written by gguf-py from the Llama checkpoint (Q8_0, Q4_1 and F32
        tensors, the rows of W_q and W_k permuted as llama.cpp writes them) with the values
        transformers dequantises from it and the ids its tokenizer gives. Written to
        chapters/ch20-real-model/fixtures/.
    python reference/ch20_real_model.py --real models/SmolLM2-135M-Instruct.Q4_1.gguf
        The real model: greedy continuations, sampled ones, the logits of a prompt, the
        tokens of hard strings and a rendered chat; fixtures/real/.
    python reference/ch20_real_model.py [--seed S] [--model GGUF]
        The chapter's narrative, as `cargo run -p ch20-real-model -- --seed S` prints it,
        every number computed by transformers on the real model (default: $ATTN_MODEL, else
        models/SmolLM2-135M-Instruct.Q4_1.gguf; default seed 0, the chapter's). Progress
        goes to stderr.
    python reference/ch20_real_model.py --interventions [--seed S] [--model GGUF]
        What `cargo run -p ch20-real-model -- --interventions --seed S` prints: the loss on
        repeated random tokens with heads ablated (forward pre-hooks on `o_proj` replace a
        head's columns), and the perplexity of a paragraph of the book when every layer keeps
        only a window of keys, with and without sink tokens (chapter 15's rule as the mask).

transformers runs in float32 on one thread with eager attention. Its one patch, in every
comparison: the RoPE tables are computed as the course computes them (chapter 15), each
angle and its cosine and sine in float64, rounded once to float32; the distance to
unpatched transformers is measured and written down too. Every fixture records the
processor it was made on (`made_on`).
"""
import argparse
import json
import math
import os
import platform
import sys

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("MKL_CBWR", "AUTO")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
from safetensors.torch import save_file  # noqa: E402

torch.set_num_threads(1)
torch.set_grad_enabled(False)

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "chapters", "ch20-real-model", "fixtures")

# The strings whose tokens must equal transformers' (judged by its tokenizer built from the
# same GGUF file): whitespace runs, tabs, newlines, accents, CJK, emoji, digits, leading
# spaces and the chat's special tokens.
HARD_STRINGS = [
    "Hello, world!",
    "  two leading spaces",
    "tabs\tand\t\ttabs",
    "line one\nline two\n\n\nthree newlines",
    "trailing spaces   ",
    "accents: café, naïve, Ærøskøbing, Ελληνικά",
    "CJK: 注意力机制 と 日本語",
    "emoji: 🦀🔥👍🏽",
    "digits 1234567890 and 3.14159 and 2026-11-27",
    "<|im_start|>user\nHi<|im_end|>\n",
    "don't won't I'm you're",
    "    def f(x):\n        return x ** 2\n",
]

ZEN_PROMPT = "Beautiful is better than ugly."


def made_on():
    name = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    name = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return name


def meta():
    """What a safetensors fixture records: the processor, and the build of PyTorch's CPU
    kernels it ran (an AMD processor runs the AVX2 build, an Intel one with AVX-512 the
    AVX512 build; their softmax adds a row's exponentials in 8 or 16 lanes)."""
    return {"made_on": made_on(), "capability": torch.backends.cpu.get_cpu_capability()}


def versions():
    import tokenizers
    import gguf  # noqa: F401

    return {
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "tokenizers": tokenizers.__version__,
        "made_on": made_on(),
        "capability": torch.backends.cpu.get_cpu_capability(),
        "mkl_cbwr": os.environ.get("MKL_CBWR", ""),
    }


# --- the one patch: the course's RoPE tables -------------------------------------------------

def course_tables(position_ids, head_dim, theta):
    """cos and sin of every (position, pair) as chapter 15's rope_tables: the frequency
    1 / theta^(2i/d), the angle p * f and its cos and sin in float64 (the C library's, as
    Rust's f64 methods), rounded once to float32; each pair's value twice (the halves)."""
    freqs = [1.0 / math.pow(theta, (2 * i) / head_dim) for i in range(head_dim // 2)]
    cos, sin = [], []
    for row in position_ids.tolist():
        cos.append([[math.cos(p * f) for f in freqs] * 2 for p in row])
        sin.append([[math.sin(p * f) for f in freqs] * 2 for p in row])
    return torch.tensor(cos, dtype=torch.float64).float(), torch.tensor(sin, dtype=torch.float64).float()


def patch_rope(model):
    rot = model.model.rotary_emb
    head_dim = model.config.head_dim if getattr(model.config, "head_dim", None) else (
        model.config.hidden_size // model.config.num_attention_heads)
    params = getattr(model.config, "rope_parameters", None) or {}
    theta = params.get("rope_theta", getattr(model.config, "rope_theta", 10000.0))

    def forward(x, position_ids, *args, **kwargs):
        cos, sin = course_tables(position_ids, head_dim, theta)
        return cos.to(x.dtype), sin.to(x.dtype)

    rot.forward = forward
    return model


# --- tiny checkpoints ------------------------------------------------------------------------

def train_tokenizer():
    import codecs
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()):
        import this  # the Zen of Python, rot13 in the module (importing it prints it)
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    zen = codecs.decode(this.s, "rot13")
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=320,
        special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator([zen] * 4, trainer)
    return tok


def tiny_config(arch, vocab):
    common = dict(vocab_size=vocab, hidden_size=64, intermediate_size=192, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                  bos_token_id=0, eos_token_id=2, pad_token_id=None, initializer_range=0.1,
                  attn_implementation="eager")
    if arch == "llama":
        from transformers import LlamaConfig
        return LlamaConfig(rms_norm_eps=1e-5, rope_theta=100000.0, tie_word_embeddings=True, **common)
    from transformers import Qwen3Config
    return Qwen3Config(head_dim=16, rms_norm_eps=1e-6, rope_theta=1000000.0, tie_word_embeddings=False, **common)


def tiny_model(arch, vocab):
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(tiny_config(arch, vocab)).eval()
    model.set_attn_implementation("eager")
    # Norm weights drawn too, so a loader that skips one is caught.
    for name, p in model.named_parameters():
        if name.endswith("norm.weight"):
            p.copy_(1.0 + 0.2 * torch.randn(p.shape))
    return model


def greedy(model, ids, n):
    out = model.generate(ids, max_new_tokens=n, do_sample=False, top_k=None, top_p=None,
                         output_scores=True, return_dict_in_generate=True, eos_token_id=None,
                         pad_token_id=0)
    return out.sequences[:, ids.shape[1]:], torch.stack(out.scores, 1)


CHATML = ("{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
          "{{ '<|im_start|>system\nYou are a tiny model.<|im_end|>\n' }}{% endif %}"
          "{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
          "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}")


def write_tiny_gguf(model, tok, path):
    """The tiny Llama as llama.cpp's converter writes it: Q/K rows permuted for its
    interleaved RoPE; the embedding in Q8_0, layer 0's matrices in Q4_1, layer 1's in Q8_0
    (its W_v in F32), every norm in F32."""
    import gguf
    from gguf import GGMLQuantizationType as Q

    c = model.config
    w = gguf.GGUFWriter(path, "llama")
    w.add_block_count(c.num_hidden_layers)
    w.add_context_length(c.max_position_embeddings)
    w.add_embedding_length(c.hidden_size)
    w.add_feed_forward_length(c.intermediate_size)
    w.add_head_count(c.num_attention_heads)
    w.add_head_count_kv(c.num_key_value_heads)
    w.add_rope_freq_base(c.rope_parameters["rope_theta"] if hasattr(c, "rope_parameters") and c.rope_parameters else c.rope_theta)
    w.add_layer_norm_rms_eps(c.rms_norm_eps)
    w.add_rope_dimension_count(c.hidden_size // c.num_attention_heads)
    vocab = json.loads(tok.to_str())["model"]
    tokens = [t for t, _ in sorted(vocab["vocab"].items(), key=lambda kv: kv[1])]
    special = {"<|endoftext|>", "<|im_start|>", "<|im_end|>"}
    merges = [m if isinstance(m, str) else " ".join(m) for m in vocab["merges"]]
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("smollm")
    w.add_token_list(tokens)
    w.add_token_types([3 if t in special else 1 for t in tokens])
    w.add_token_merges(merges)
    w.add_bos_token_id(0)
    w.add_eos_token_id(2)
    w.add_chat_template(CHATML)

    def permute(weights, n_head):
        return (weights.reshape(n_head, 2, weights.shape[0] // n_head // 2, *weights.shape[1:])
                .swapaxes(1, 2).reshape(weights.shape))

    sd = {k: v.numpy().astype(np.float32) for k, v in model.state_dict().items()}
    names = {"input_layernorm": "attn_norm", "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k",
             "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output",
             "post_attention_layernorm": "ffn_norm", "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up",
             "mlp.down_proj": "ffn_down"}

    def add(name, data, qtype):
        if qtype == Q.F32:
            w.add_tensor(name, data)
        else:
            q = gguf.quants.quantize(data, qtype)
            w.add_tensor(name, q, raw_shape=q.shape, raw_dtype=qtype)

    add("token_embd.weight", sd["model.embed_tokens.weight"], Q.Q8_0)
    for layer in range(c.num_hidden_layers):
        for hf, gg in names.items():
            data = sd[f"model.layers.{layer}.{hf}.weight"]
            if hf == "self_attn.q_proj":
                data = permute(data, c.num_attention_heads)
            if hf == "self_attn.k_proj":
                data = permute(data, c.num_key_value_heads)
            if data.ndim == 1:
                qtype = Q.F32
            elif layer == 0:
                qtype = Q.Q4_1
            elif hf == "self_attn.v_proj":
                qtype = Q.F32
            else:
                qtype = Q.Q8_0
            add(f"blk.{layer}.{gg}.weight", data, qtype)
    add("output_norm.weight", sd["model.norm.weight"], Q.F32)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def fixtures():
    from transformers import AutoModelForCausalLM, AutoTokenizer, PreTrainedTokenizerFast

    os.makedirs(FIXTURES, exist_ok=True)
    tok = train_tokenizer()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<|endoftext|>", eos_token="<|im_end|>")
    ids = torch.tensor([tok.encode(ZEN_PROMPT).ids[:12]])
    assert ids.shape[1] == 12, ids.shape
    summary = {"made_on": versions(), "prompt": ZEN_PROMPT, "ids": ids[0].tolist()}
    for arch in ["llama", "qwen3"]:
        model = patch_rope(tiny_model(arch, tok.get_vocab_size()))
        folder = os.path.join(FIXTURES, f"tiny-{arch}")
        model.save_pretrained(folder)
        fast.save_pretrained(folder)
        for extra in ["generation_config.json", "chat_template.jinja", "special_tokens_map.json"]:
            if os.path.exists(os.path.join(folder, extra)):
                os.remove(os.path.join(folder, extra))
        logits = model(ids).logits
        new, scores = greedy(model, ids, 8)
        save_file({"ids": ids, "logits": logits.contiguous(), "greedy": new.contiguous(),
                   "greedy_logits": scores.contiguous()}, os.path.join(folder, "expected.safetensors"),
                  metadata=meta())
        summary[arch] = {"greedy": new[0].tolist()}
        if arch == "llama":
            gguf_path = os.path.join(FIXTURES, "tiny-llama.gguf")
            write_tiny_gguf(model, tok, gguf_path)
            loaded = AutoModelForCausalLM.from_pretrained(FIXTURES, gguf_file="tiny-llama.gguf",
                                                          dtype=torch.float32).eval()
            loaded.set_attn_implementation("eager")
            patch_rope(loaded)
            sd = {k: v.contiguous() for k, v in loaded.state_dict().items() if k != "lm_head.weight"}
            sd["logits"] = loaded(ids).logits.contiguous()
            save_file(sd, os.path.join(FIXTURES, "tiny-llama.gguf.expected.safetensors"),
                      metadata=meta())
            gtok = AutoTokenizer.from_pretrained(FIXTURES, gguf_file="tiny-llama.gguf")
            summary["gguf_tokens"] = {s: gtok.encode(s, add_special_tokens=False) for s in HARD_STRINGS}
            summary["gguf_chat"] = gtok.apply_chat_template(
                [{"role": "user", "content": "Hi"}], add_generation_prompt=True, tokenize=False)
    with open(os.path.join(FIXTURES, "tiny.json"), "w") as f:
        json.dump(summary, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print("wrote", os.path.relpath(FIXTURES))


# The real model's fixed prompts: two plain continuations and two chats.
PROMPTS = [
    {"kind": "prompt", "text": "The capital of France is"},
    {"kind": "prompt", "text": "def fibonacci(n):"},
    {"kind": "chat", "text": "What is the capital of France?"},
    {"kind": "chat", "text": "Explain attention in one sentence.", "system": "You are a concise teacher."},
]
# Sampling with a seed: transformers' generate(do_sample=True) after torch.manual_seed(seed).
SAMPLED = [
    {"seed": 0, "temperature": 0.8, "top_k": None, "top_p": None, "min_p": None},
    {"seed": 1, "temperature": 1.0, "top_k": 40, "top_p": None, "min_p": None},
    {"seed": 2, "temperature": 0.7, "top_k": None, "top_p": 0.9, "min_p": None},
    {"seed": 3, "temperature": 1.0, "top_k": None, "top_p": None, "min_p": 0.1},
]
# The sentence whose attention chapter 20 reads for sinks (as setup::SENTENCE), and the
# layer whose heads the sink exercise gets.
SENTENCE = "The cat sat on the mat because the cat was tired, and the mat was warm."
SINK_LAYER = 5
GREEDY_TOKENS = 32
SAMPLED_TOKENS = 16
# Repeated random tokens for the induction scores (chapter 19's test, Olsson et al.).
INDUCTION_BATCH, INDUCTION_HALF = 4, 50


def load_real(path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder, name = os.path.split(os.path.abspath(path))
    tok = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32).eval()
    model.set_attn_implementation("eager")
    return tok, model


def prompt_ids(tok, p):
    if p["kind"] == "prompt":
        return torch.tensor([tok.encode(p["text"], add_special_tokens=False)])
    messages = ([{"role": "system", "content": p["system"]}] if "system" in p else []) + [
        {"role": "user", "content": p["text"]}]
    text = tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    return torch.tensor([tok.encode(text, add_special_tokens=False)]), text


def real(path):
    tok, model = load_real(path)
    out = os.path.join(FIXTURES, "real")
    os.makedirs(out, exist_ok=True)
    eos = model.config.eos_token_id
    summary = {"made_on": versions(), "model": os.path.basename(path), "eos": eos, "prompts": [],
               "sampled": [], "tokens": {}}
    # Unpatched transformers first, then the course's RoPE tables for everything else.
    unpatched = {}
    for i, p in enumerate(PROMPTS):
        ids = prompt_ids(tok, p)
        ids = ids[0] if isinstance(ids, tuple) else ids
        unpatched[i] = (model(ids).logits[0, -1], model.generate(
            ids, max_new_tokens=GREEDY_TOKENS, do_sample=False, top_k=None, top_p=None)[0, ids.shape[1]:])
    patch_rope(model)
    tensors = {}
    for i, p in enumerate(PROMPTS):
        made = prompt_ids(tok, p)
        ids, rendered = made if isinstance(made, tuple) else (made, None)
        last = model(ids).logits[0, -1]
        new = model.generate(ids, max_new_tokens=GREEDY_TOKENS, do_sample=False, top_k=None, top_p=None)
        new = new[0, ids.shape[1]:]
        entry = dict(p, ids=ids[0].tolist(), greedy=new.tolist(), greedy_unpatched=unpatched[i][1].tolist(),
                     rope_patch_max_abs=(last - unpatched[i][0]).abs().max().item(),
                     text_out=tok.decode(new))
        if rendered is not None:
            entry["rendered"] = rendered
        summary["prompts"].append(entry)
        tensors[f"last_logits_{i}"] = last.contiguous()
    first = torch.tensor([summary["prompts"][0]["ids"]])
    for s in SAMPLED:
        torch.manual_seed(s["seed"])
        new = model.generate(first, max_new_tokens=SAMPLED_TOKENS, do_sample=True, temperature=s["temperature"],
                             top_k=s["top_k"] or 0, top_p=s["top_p"] or 1.0, min_p=s["min_p"],
                             eos_token_id=None)[0, first.shape[1]:]
        summary["sampled"].append(dict(s, tokens=new.tolist()))
    for text in HARD_STRINGS:
        summary["tokens"][text] = tok.encode(text, add_special_tokens=False)
    # Chapter 19's scores over all heads, on repeated random tokens after the bos token.
    g = torch.Generator().manual_seed(0)
    half = torch.randint(1000, 40000, (INDUCTION_BATCH, INDUCTION_HALF), generator=g)
    ids = torch.cat([torch.full((INDUCTION_BATCH, 1), 1), half, half], 1)
    result = model(ids, output_attentions=True)
    lp = torch.log_softmax(result.logits[:, :-1], -1).gather(-1, ids[:, 1:, None])[..., 0]
    summary["induction"] = {"ids_seed": 0, "batch": INDUCTION_BATCH, "half": INDUCTION_HALF,
                            "loss_first_half": -lp[:, :INDUCTION_HALF].mean().item(),
                            "loss_repeat": -lp[:, INDUCTION_HALF:].mean().item(), "heads": []}
    for layer, a in enumerate(result.attentions):
        # query i of the repeat looks at key i - (half - 1): the token after the earlier occurrence
        ind = a.diagonal(offset=-(INDUCTION_HALF - 1), dim1=-2, dim2=-1)[..., 1:].mean((0, -1))
        prev = a.diagonal(offset=-1, dim1=-2, dim2=-1).mean((0, -1))
        sink = a[..., 1:, 0].mean((0, -1))
        for h in range(a.shape[1]):
            summary["induction"]["heads"].append([layer, h, ind[h].item(), prev[h].item(), sink[h].item()])
    save_file(tensors, os.path.join(out, "last-logits.safetensors"), metadata=meta())
    # A few KB of real attention weights for the exercises: every head of one layer on a
    # sentence (where is the sink?), and the strongest induction head on a short repeat.
    best = max(summary["induction"]["heads"], key=lambda h: h[2])
    sentence = torch.tensor([tok.encode(SENTENCE, add_special_tokens=False)])
    maps = model(sentence, output_attentions=True).attentions
    g = torch.Generator().manual_seed(1)
    short = torch.randint(1000, 40000, (1, 12), generator=g)
    repeat = torch.cat([torch.full((1, 1), 1), short, short], 1)
    induction_map = model(repeat, output_attentions=True).attentions[best[0]][0, best[1]]
    save_file({"sentence_ids": sentence[0], "sentence_layer": maps[SINK_LAYER][0].contiguous(),
               "repeat_ids": repeat[0], "induction_head": induction_map.contiguous()},
              os.path.join(out, "attention.safetensors"),
              metadata={**meta(), "sink_layer": str(SINK_LAYER),
                        "induction_head": f"{best[0]}.{best[1]}"})
    with open(os.path.join(out, "real.json"), "w") as f:
        json.dump(summary, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print("wrote", os.path.relpath(out))


# --- the chapter's narrative, as `cargo run -p ch20-real-model -- --seed S` prints it ---------

# The chapter's choices (chapters/ch20-real-model/src/setup.rs).
NARRATIVE_SEED = 0
PROMPT = "The capital of France is"
QUESTION = "What is the capital of France?"
ANSWER_TOKENS = 24
NARRATIVE_SAMPLED_TOKENS = 10
CACHED_TOKENS = 8
CODE_PROMPT = "def add(a, b):\n    return a + b\n\ndef sub(a, b):\n    return a - b\n\ndef mul(a, b):"
DRAFT_K = 4
MAX_NGRAM = 3
SPECULATED_TOKENS = 24
NARRATIVE_INDUCTION_BATCH, NARRATIVE_INDUCTION_HALF = 2, 50
TOP_HEADS = 3
INDUCTION_THRESHOLD = 0.4
# Chapter 15's samplers (chapters/ch15-modern-layer/src/setup.rs), as generate's arguments.
NARRATIVE_SAMPLERS = [
    ("temperature 1", dict(temperature=1.0)),
    ("temperature 0.7, top-k 5", dict(temperature=0.7, top_k=5)),
    ("top-p 0.9", dict(top_p=0.9)),
    ("temperature 1.5, min-p 0.1", dict(temperature=1.5, min_p=0.1)),
    ("repetition penalty 1.3", dict(repetition_penalty=1.3)),
    ("top-k 1", dict(top_k=1)),
]


def default_model():
    return os.environ.get("ATTN_MODEL") or os.path.join(HERE, "..", "models", "SmolLM2-135M-Instruct.Q4_1.gguf")


def progress(what):
    print(f"... {what}", file=sys.stderr, flush=True)


def rust_debug(text):
    """A string as Rust's `{:?}` prints it: quoted, with \\t \\r \\n \\\\ \\" \\0 escaped and
    other control characters as \\u{..}."""
    import unicodedata

    out = []
    for i, c in enumerate(text):
        escapes = {"\t": "\\t", "\r": "\\r", "\n": "\\n", "\\": "\\\\", '"': '\\"', "\0": "\\0"}
        if c in escapes:
            out.append(escapes[c])
        elif unicodedata.category(c) in ("Cc", "Cf", "Co", "Cn", "Cs", "Zl", "Zp") or (
                i == 0 and unicodedata.category(c) in ("Mn", "Me")):
            out.append("\\u{%x}" % ord(c))
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def rust_whole(x):
    """A whole float as Rust's `{}` prints it: `100000` where Python prints `100000.0`."""
    assert float(x).is_integer(), x
    return str(int(x))


def rust_exp_f32(x):
    """A float32 as Rust's `{:e}` prints it: the shortest digits that read back as the same
    float32 (`1e-5` for the float32 nearest 1e-5, which widens to 9.999999747378752e-6), and
    `e-5` where Python writes `e-05`."""
    from decimal import Decimal

    sign, digits, exponent = Decimal(str(np.float32(x))).normalize().as_tuple()
    digits = "".join(map(str, digits))
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{'-' if sign else ''}{mantissa}e{exponent + len(digits) - 1}"


def narrative_generate(model, ids, new_tokens, eos, **sampling):
    """New tokens after `ids` by transformers' generate: greedy, or sampled with the given
    warpers and nothing else (no top-k of 50 by default)."""
    if sampling:
        args = dict(do_sample=True, temperature=1.0, top_k=0, top_p=1.0, min_p=None,
                    repetition_penalty=None)
        args.update(sampling)
    else:
        args = dict(do_sample=False, temperature=None, top_k=None, top_p=None)
    out = model.generate(ids, max_new_tokens=new_tokens, eos_token_id=eos,
                         pad_token_id=model.config.eos_token_id, **args)
    return out[0, ids.shape[1]:].tolist()


def lookup_draft(ids, k, max_ngram):
    """Prompt lookup (chapter 20's draft): the up to `k` tokens after the latest earlier
    occurrence of the last n tokens, n from `max_ngram` down to 1."""
    for n in range(min(max_ngram, len(ids) - 1), 0, -1):
        tail = ids[len(ids) - n:]
        for start in range(len(ids) - n - 1, -1, -1):
            if ids[start:start + n] == tail:
                return ids[start + n:start + n + k]
    return []


def speculate_lookup(model, prompt, n_new, k):
    """Greedy speculative decoding with prompt-lookup drafts, every pass transformers' with
    its KV cache: the cache holds all tokens but the last; each pass reads the last token and
    the draft, keeps the run of drafts equal to the model's own choices, plus its next token."""
    from transformers import DynamicCache

    ids = list(prompt)
    cache = DynamicCache(config=model.config)
    model(torch.tensor([ids[:-1]]), cache=cache, use_cache=True)
    rounds = []
    while len(ids) < len(prompt) + n_new:
        k_now = min(k, len(prompt) + n_new - len(ids) - 1)
        drafted = lookup_draft(ids, k_now, MAX_NGRAM)
        tokens = [ids[-1]] + drafted
        logits = model(torch.tensor([tokens]), cache=cache, use_cache=True).logits
        choices = logits[0].argmax(-1).tolist()
        n = 0
        while n < len(drafted) and drafted[n] == choices[n]:
            n += 1
        if n < len(drafted):
            cache.crop(n - len(drafted))  # drop the rejected drafts' keys and values
        ids += choices[:n + 1]
        rounds.append((len(drafted), n))
    return ids[len(prompt):], rounds


def narrative(path, seed):
    tok, model = load_real(path)
    patch_rope(model)
    c = model.config
    eos = c.eos_token_id
    print("# Chapter 20: a real model")
    print()

    # The model card: every size from the config transformers built from the file, the
    # parameters counted from its tensors, a token's cache measured on its own cache.
    params = sum(p.numel() for p in model.parameters())
    head_dim = getattr(c, "head_dim", None) or c.hidden_size // c.num_attention_heads
    rope = (getattr(c, "rope_parameters", None) or {}).get("rope_theta", getattr(c, "rope_theta", None))
    cache = model(torch.tensor([[1]]), use_cache=True).past_key_values
    per_token = sum(layer.keys.numel() * layer.keys.element_size() + layer.values.numel() * layer.values.element_size()
                    for layer in cache.layers)
    print("## The model card")
    print(f"file: {os.path.basename(path)}")
    print(f"parameters: {params} ({params / 1e6:.1f} M)")
    print(f"vocabulary: {c.vocab_size} tokens (chapter 1's embedding: {c.vocab_size} x {c.hidden_size})")
    print(f"layers: {c.num_hidden_layers} (chapter 15's layer)")
    print(f"query heads: {c.num_attention_heads}, key/value heads: {c.num_key_value_heads}, "
          f"head size: {head_dim} (chapter 14's GQA)")
    print(f"RoPE base: {rust_whole(rope)} (chapter 12, chapter 15)")
    # The file stores eps as a float32; the chapter prints that float32's shortest digits.
    print(f"RMSNorm eps: {rust_exp_f32(c.rms_norm_eps)}; SwiGLU width: {c.intermediate_size} (chapter 15)")
    print(f"context: {c.max_position_embeddings} tokens; tied embeddings: {str(c.tie_word_embeddings).lower()}")
    print(f"KV cache per token (chapter 17's ledger, float32): {per_token} bytes")
    print()

    progress("the first logits")
    ids = tok.encode(PROMPT, add_special_tokens=False)
    logits = model(torch.tensor([ids])).logits[0, -1]
    print("## The first logits, beside transformers'")
    print(f"prompt: {rust_debug(PROMPT)} -> {len(ids)} tokens {ids}")
    print("token        ours      transformers")
    # Our column is the chapter's own forward pass; printed to four decimals it is
    # transformers' (the largest difference, a few units in the fifth, goes to stderr).
    for v, i in zip(*logits.topk(5)):
        piece = tok.decode([i.item()])
        print(f"{rust_debug(piece):<10} {v.item():>9.4f} {v.item():>9.4f}")
    print()

    progress("a greedy answer")
    text = tok.apply_chat_template([{"role": "user", "content": QUESTION}], add_generation_prompt=True,
                                   tokenize=False)
    chat = tok.encode(text, add_special_tokens=False)
    new = narrative_generate(model, torch.tensor([chat]), ANSWER_TOKENS, eos)
    answer = tok.decode(new)
    print("## A greedy answer")
    print(f"user: {QUESTION}")
    print(f"({len(chat)} prompt tokens through the chat template)")
    print(f"assistant: {answer.removesuffix('<|im_end|>')}")
    print()

    progress("chapter 15's samplers")
    print("## Chapter 15's samplers, now visibly different")
    print(f"{PROMPT} ...")
    first = torch.tensor([ids])
    greedy = narrative_generate(model, first, NARRATIVE_SAMPLED_TOKENS, eos)
    print(f"{'greedy':<28} {rust_debug(tok.decode(greedy))}")
    for name, sampling in NARRATIVE_SAMPLERS:
        torch.manual_seed(seed)
        new = narrative_generate(model, first, NARRATIVE_SAMPLED_TOKENS, eos, **sampling)
        print(f"{name:<28} {rust_debug(tok.decode(new))}")
    print()

    progress("cached decoding against recomputing")
    out = model.generate(first, max_new_tokens=CACHED_TOKENS, min_new_tokens=CACHED_TOKENS, do_sample=False,
                         temperature=None, top_k=None, top_p=None, output_logits=True,
                         return_dict_in_generate=True, pad_token_id=eos)
    cached = torch.stack(out.logits, 1)[0]
    assert cached.shape[0] == CACHED_TOKENS, cached.shape
    all_logits = model(out.sequences[:, :len(ids) + CACHED_TOKENS - 1]).logits[0]
    recomputed = all_logits[len(ids) - 1:]
    same = (cached.argmax(-1) == recomputed.argmax(-1)).sum().item()
    gap = (cached - recomputed).abs().max().item()
    order = math.floor(math.log10(gap))  # its digits depend on the order of the additions
    print("## Cached decoding against recomputing")
    print(f"{CACHED_TOKENS} tokens; the same token chosen at {same} of {CACHED_TOKENS} steps")
    print(f"largest logit difference: between 1e{order} and 1e{order + 1}")
    progress(f"largest logit difference: {gap:.1e}")
    print()

    progress("attention sinks")
    sentence = tok.encode(SENTENCE, add_special_tokens=False)
    maps = model(torch.tensor([sentence]), output_attentions=True).attentions
    print("## Attention sinks")
    print(f"{rust_debug(SENTENCE)}: {len(sentence)} tokens")
    print("first token's share of each layer's attention "
          f"(mean over heads, queries 1 to {len(sentence) - 1}):")
    # Each head's mean weight on key 0 over the queries after the first, then their mean.
    shares = [a[:, :, 1:, 0].double().mean((0, -1)).mean().item() for a in maps]
    for row in range(0, len(shares), 10):
        chunk = shares[row:row + 10]
        print(f"layers {row:>2}-{row + len(chunk) - 1:>2}: " + " ".join(f"{s:.2f}" for s in chunk))
    print()

    progress("speculative decoding")
    code = tok.encode(CODE_PROMPT, add_special_tokens=False)
    new, rounds = speculate_lookup(model, code, SPECULATED_TOKENS, DRAFT_K)
    greedy = narrative_generate(model, torch.tensor([code]), SPECULATED_TOKENS, None)
    assert len(greedy) == SPECULATED_TOKENS, greedy
    drafted = sum(d for d, _ in rounds)
    kept = sum(n for _, n in rounds)
    print("## Speculative decoding with prompt lookup")
    print(f"{CODE_PROMPT}{tok.decode(new)}")
    print(f"drafts of up to {DRAFT_K} tokens looked up in the sequence itself")
    print(f"passes of the full model: {len(rounds)} for {SPECULATED_TOKENS} tokens")
    print(f"acceptance rate: {kept / drafted:.2f}, tokens per pass: {(kept + len(rounds)) / len(rounds):.2f}")
    print(f"same tokens as greedy decoding: {str(new == greedy).lower()}")
    print()

    progress("induction heads")
    batch, half = NARRATIVE_INDUCTION_BATCH, NARRATIVE_INDUCTION_HALF
    torch.manual_seed(seed)
    random = torch.randint(1000, 40000, (batch, half))
    bos = c.bos_token_id if c.bos_token_id is not None else 1
    ids = torch.cat([torch.full((batch, 1), bos), random, random], 1)
    result = model(ids, output_attentions=True)
    lp = torch.log_softmax(result.logits[:, :-1], -1).gather(-1, ids[:, 1:, None])[..., 0].double()
    heads = []
    for layer, a in enumerate(result.attentions):
        a = a.double()
        # from query i of the repeat to key i - (half - 1); from every query to the one before
        ind = a.diagonal(offset=-(half - 1), dim1=-2, dim2=-1)[..., 1:].mean((0, -1))
        prev = a.diagonal(offset=-1, dim1=-2, dim2=-1).mean((0, -1))
        heads += [(layer, h, ind[h].item(), prev[h].item()) for h in range(a.shape[1])]
    by_induction = sorted(heads, key=lambda h: -h[2])
    by_previous = sorted(heads, key=lambda h: -h[3])
    strong = sum(h[2] > INDUCTION_THRESHOLD for h in heads)
    print("## Induction heads, by chapter 19's scores")
    print(f"{batch} sequences of {half} random tokens, each repeated once")
    print(f"loss on the first half: {-lp[:, :half].mean().item():.2f}, on the repeat: {-lp[:, half:].mean().item():.2f}")
    print(f"heads with an induction score above {INDUCTION_THRESHOLD}: {strong} of {len(heads)}")
    print("strongest induction heads (layer.head): " + ", ".join(
        f"{h[0]}.{h[1]} ({h[2]:.2f})" for h in by_induction[:TOP_HEADS]))
    print("strongest previous-token heads: " + ", ".join(
        f"{h[0]}.{h[1]} ({h[3]:.2f})" for h in by_previous[:TOP_HEADS]))
    print()


# --- `--interventions`: heads ablated, and a window without its sink ------------------------

# The chapter's choices (chapters/ch20-real-model/src/setup.rs).
INDUCTION_HEAD = (18, 6)
PREVIOUS_TOKEN_HEADS = [(16, 0), (11, 1)]
PARAGRAPH = os.path.join(HERE, "..", "chapters", "ch20-real-model", "texts", "why-attention.txt")
STREAMING_WINDOW, STREAMING_SINKS = 16, 4


def ablated(model, heads, replacement):
    """Forward pre-hooks on the output projections of the layers of `heads` ((layer, head)
    pairs): each head's columns of the merged heads replaced by zeros or by their mean over
    the batch's sequences and positions. Returns the hooks' handles, to remove them."""
    head_dim = model.config.hidden_size // model.config.num_attention_heads
    by_layer = {}
    for layer, head in heads:
        by_layer.setdefault(layer, []).append(head)

    def hook_for(layer_heads):
        def hook(module, args):
            x = args[0].clone()
            for head in layer_heads:
                columns = slice(head * head_dim, (head + 1) * head_dim)
                x[..., columns] = 0.0 if replacement == "zero" else x[..., columns].mean((0, 1))
            return (x,)
        return hook

    return [model.model.layers[layer].self_attn.o_proj.register_forward_pre_hook(hook_for(hs))
            for layer, hs in by_layer.items()]


# Chapter 15's rule for a local layer with StreamingLLM's sink tokens: query i sees key j if
# j <= i and (i - window < j or j < sinks). The keys keep their positions in the text.
STREAMING = {"window": None, "sinks": 0}


def streaming_attention(module, query, key, value, attention_mask, scaling, dropout=0.0, **kwargs):
    """transformers' eager attention with chapter 15's window-and-sinks mask in place of the
    causal one."""
    from transformers.models.llama.modeling_llama import eager_attention_forward

    t = query.shape[2]
    i, j = torch.arange(t)[:, None], torch.arange(t)[None, :]
    sees = j <= i
    if STREAMING["window"] is not None:
        sees &= (i - STREAMING["window"] < j) | (j < STREAMING["sinks"])
    mask = torch.zeros(t, t).masked_fill(~sees, torch.finfo(torch.float32).min)
    return eager_attention_forward(module, query, key, value, mask[None, None], scaling, dropout)


def interventions(path, seed):
    from transformers import AttentionInterface

    tok, model = load_real(path)
    patch_rope(model)
    c = model.config
    print("# Chapter 20: interventions on a real model")
    print()

    progress("ablating heads")
    batch, half = NARRATIVE_INDUCTION_BATCH, NARRATIVE_INDUCTION_HALF
    torch.manual_seed(seed)
    random = torch.randint(1000, 40000, (batch, half))
    bos = c.bos_token_id if c.bos_token_id is not None else 1
    ids = torch.cat([torch.full((batch, 1), bos), random, random], 1)
    named = [INDUCTION_HEAD] + PREVIOUS_TOKEN_HEADS
    # The control: a head drawn at random after the tokens, none of the named ones.
    while True:
        drawn = torch.randint(0, c.num_hidden_layers * c.num_attention_heads, (1,)).item()
        control = (drawn // c.num_attention_heads, drawn % c.num_attention_heads)
        if control not in named:
            break

    def name(h):
        return f"{h[0]}.{h[1]}"

    previous, other = PREVIOUS_TOKEN_HEADS
    rows = [("none", []), (f"{name(INDUCTION_HEAD)} (induction)", [INDUCTION_HEAD]),
            (f"{name(previous)} (previous token)", [previous]),
            (f"{name(other)} (previous token)", [other]),
            (f"{name(INDUCTION_HEAD)} and {name(previous)}", [INDUCTION_HEAD, previous]),
            (f"{name(control)} (control, at random)", [control])]
    layer, head = INDUCTION_HEAD

    def measure(heads, replacement):
        handles = ablated(model, heads, replacement)
        result = model(ids, output_attentions=True)
        for h in handles:
            h.remove()
        lp = torch.log_softmax(result.logits[:, :-1], -1).gather(-1, ids[:, 1:, None])[..., 0].double()
        a = result.attentions[layer].double()
        score = a.diagonal(offset=-(half - 1), dim1=-2, dim2=-1)[..., 1:].mean((0, -1))[head].item()
        return f"{-lp[:, half:].mean().item():.2f} ({score:.2f})"

    print("## Ablating heads")
    print(f"{batch} sequences of {half} random tokens, each repeated once")
    print(f"loss on the repeat (and {name(INDUCTION_HEAD)}'s induction score) with heads ablated:")
    print(f"{'heads ablated':<28} {'zero':>13} {'mean':>13}")
    for label, heads in rows:
        zero = measure(heads, "zero")
        mean = zero if not heads else measure(heads, "mean")
        print(f"{label:<28} {zero:>13} {mean:>13}")
    print()

    progress("a window without its sink")
    with open(PARAGRAPH) as f:
        text = f.read()
    ids = torch.tensor([tok.encode(text, add_special_tokens=False)])
    n = ids.shape[1]
    AttentionInterface.register("streaming", streaming_attention)
    model.set_attn_implementation("streaming")

    def losses(window, sinks):
        STREAMING.update(window=window, sinks=sinks)
        lp = torch.log_softmax(model(ids).logits[0, :-1], -1).gather(-1, ids[0, 1:, None])[:, 0].double()
        return -lp

    def ppl(loss):
        return math.exp(loss.mean().item())

    full = losses(None, 0)
    past = slice(STREAMING_WINDOW, n - 1)
    print("## A window without its sink")
    print(f'two paragraphs of this book ("Why attention?"): {n} tokens')
    print(f"perplexity over its {n - 1} predictions: {ppl(full):.1f}")
    print(f"the {n - 1 - STREAMING_WINDOW} predictions past a window of {STREAMING_WINDOW} keys, "
          "every layer local:")
    print(f"{'full attention':<40} {ppl(full[past]):>7.1f}")
    print(f"{'the window alone (first token evicted)':<40} {ppl(losses(STREAMING_WINDOW, 0)[past]):>7.1f}")
    print(f"{f'the window and {STREAMING_SINKS} sink tokens':<40} "
          f"{ppl(losses(STREAMING_WINDOW, STREAMING_SINKS)[past]):>7.1f}")
    print()
    model.set_attn_implementation("eager")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fixtures", action="store_true")
    parser.add_argument("--real", metavar="GGUF")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--model", metavar="GGUF", default=None)
    parser.add_argument("--interventions", action="store_true",
                        help="heads ablated and a window without its sink, as "
                             "`cargo run -p ch20-real-model -- --interventions` prints them")
    args = parser.parse_args()
    if args.fixtures:
        fixtures()
    if args.real:
        real(args.real)
    seed = NARRATIVE_SEED if args.seed is None else args.seed
    if args.interventions:
        interventions(args.model or default_model(), seed)
    elif not args.fixtures and not args.real:
        narrative(args.model or default_model(), seed)


if __name__ == "__main__":
    sys.exit(main())
