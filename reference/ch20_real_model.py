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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fixtures", action="store_true")
    parser.add_argument("--real", metavar="GGUF")
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    if args.fixtures:
        fixtures()
    if args.real:
        real(args.real)


if __name__ == "__main__":
    sys.exit(main())
