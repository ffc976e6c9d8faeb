"""Chapter 23: teaching SmolLM2 arithmetic with LoRA (PyTorch + PEFT reference).

The task: sums a + b of two numbers below 100, numbered a * 100 + b. torch.manual_seed(S)
(S = 23 unless --seed S); the held-out sums are drawn in rounds of 200 numbers from
torch.randint(0, 10000, (200,)), each number not seen before kept, until there are 200;
every other sum is a training sum, in order of its number. A question is "What is a + b?";
on a model with a chat template it is rendered as the single user message of a
conversation with the generation prompt; without one (chapter 20's tiny checkpoints) it
is the question and a new line. The answer is "a + b = c." and the end-of-sequence token.
The ids are the prompt's ids, then the answer's (each encoded alone, no special tokens
added), then the end token; a batch pads them on the right with the end token; the labels
are the answer's ids and the end token, -100 everywhere else.

The adapters: PEFT's LoraConfig(r=8, lora_alpha=16, target_modules=["q_proj", "v_proj"],
lora_dropout=0.0, task_type="CAUSAL_LM") on the model in float32 with eager attention.
After the split, each lora_A is replaced, the first layer's first and within a layer
q_proj before v_proj, by torch.nn.init.kaiming_uniform_(torch.empty(r, d_in), a=sqrt(5))
drawn from the default generator; every lora_B stays zero (PEFT's start).

A step: torch.randint(0, len(training sums), (8,)) picks the batch's sums; the loss is
F.cross_entropy(logits[:, :-1], labels[:, 1:], ignore_index=-100) (the mean over the
answers' tokens); loss.backward(); torch.optim.AdamW(trainable, lr) (weight decay 0.01)
steps; the gradients are zeroed. Losses are printed :.4f.

    python reference/ch23_lora.py [--seed S]
        The chapter's narrative on chapter 20's tiny checkpoint (the Llama one), as
        `cargo run -p ch23-lora -- --seed S` prints it.
    python reference/ch23_lora.py --fixtures
        Writes chapters/ch23-lora/tests/fixtures/: the adapter PEFT trains in the
        narrative's run (peft/, saved by save_pretrained) with its logits on the example,
        and the logits PEFT computes with the course's adapter (ours/, saved by
        `cargo run -p ch23-lora --example save_tiny -- DIR`), loaded by PeftModel.
    python reference/ch23_lora.py --real models/SmolLM2-135M-Instruct.Q4_1.gguf
        The first steps on SmolLM2 (batch 2, lr 1e-3), their losses as JSON:
        chapters/ch23-lora/tests/fixtures/real_losses.json.
    python reference/ch23_lora.py --answers models/SmolLM2-135M-Instruct.Q4_1.gguf
        SmolLM2 with the chapter's committed adapter (chapters/ch23-lora/data/adapter,
        loaded by PeftModel and merged into the weights by merge_and_unload, as the chapter
        merges it) answers the first 20 held-out sums of seed 23 by greedy decoding
        (generate, up to 16 new tokens, stopping at the end token), with the course's RoPE
        tables (chapter 20's one patch) and, to measure the patch, without them: the
        prompts' ids, the new ids and their text, and the adapter's files' sha256, as JSON:
        chapters/ch23-lora/tests/fixtures/real_answers.json. Run it again whenever the
        committed adapter changes (the chapter's test says so when the sha256 differs).
"""

import argparse
import hashlib
import json
import math
import os
import subprocess
import sys

import torch
import torch.nn.functional as F
from peft import LoraConfig, PeftModel, get_peft_model
from safetensors.torch import save_file
from tokenizers import Tokenizer
from transformers import AutoModelForCausalLM, AutoTokenizer

torch.set_num_threads(1)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
TINY = os.path.join(ROOT, "chapters", "ch20-real-model", "fixtures", "tiny-llama")
FIXTURES = os.path.join(ROOT, "chapters", "ch23-lora", "tests", "fixtures")
SEED = 23
OPERANDS = 100
HELD_OUT = 200
RANK, ALPHA, TARGETS = 8, 16.0, ["q_proj", "v_proj"]
BATCH = 8
TINY_STEPS, TINY_LR = 8, 1e-2
REAL_STEPS, REAL_BATCH, REAL_LR = 3, 2, 1e-3
TRAINED = os.path.join(ROOT, "chapters", "ch23-lora", "data", "adapter")
ANSWERS, ANSWER_TOKENS = 20, 16
EXAMPLE = (17, 25)
IGNORE = -100


def seeded(seed, article):
    return article if seed is None else seed


def split():
    """The held-out sums and the training sums."""
    total = OPERANDS * OPERANDS
    taken, chosen = set(), []
    while len(chosen) < HELD_OUT:
        for code in torch.randint(0, total, (HELD_OUT,)).tolist():
            if len(chosen) < HELD_OUT and code not in taken:
                taken.add(code)
                chosen.append(divmod(code, OPERANDS))
    train = [divmod(c, OPERANDS) for c in range(total) if c not in taken]
    return train, chosen


def question(s):
    return f"What is {s[0]} + {s[1]}?"


def answer(s):
    return f"{s[0]} + {s[1]} = {s[0] + s[1]}."


class Encoder:
    """The ids of a sum, as the course's Encoder makes them."""

    def __init__(self, encode, eos, chat=None):
        self.encode, self.eos, self.chat = encode, eos, chat

    def prompt(self, s):
        if self.chat is None:
            return question(s) + "\n"
        return self.chat(question(s))

    def example(self, s):
        ids = self.encode(self.prompt(s))
        prompt_len = len(ids)
        ids = ids + self.encode(answer(s)) + [self.eos]
        return ids, prompt_len


def batch(examples, pad):
    longest = max(len(ids) for ids, _ in examples)
    ids, labels = [], []
    for e, prompt_len in examples:
        ids.append(e + [pad] * (longest - len(e)))
        labels.append([t if i >= prompt_len else IGNORE for i, t in enumerate(e)]
                      + [IGNORE] * (longest - len(e)))
    return torch.tensor(ids), torch.tensor(labels)


def tiny():
    model = AutoModelForCausalLM.from_pretrained(TINY, dtype=torch.float32,
                                                 attn_implementation="eager")
    tok = Tokenizer.from_file(os.path.join(TINY, "tokenizer.json"))
    encoder = Encoder(lambda t: tok.encode(t, add_special_tokens=False).ids,
                      model.config.eos_token_id)
    return model, encoder


def real(path):
    folder, name = os.path.split(os.path.abspath(path))
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    model.set_attn_implementation("eager")
    tok = AutoTokenizer.from_pretrained(folder, gguf_file=name)

    def chat(q):
        return tok.apply_chat_template([{"role": "user", "content": q}], tokenize=False,
                                       add_generation_prompt=True)

    encoder = Encoder(lambda t: tok(t, add_special_tokens=False).input_ids,
                      tok.eos_token_id, chat)
    encoder.decode = tok.decode
    return model, encoder


def with_adapters(model):
    config = LoraConfig(r=RANK, lora_alpha=ALPHA, target_modules=TARGETS, lora_dropout=0.0,
                        task_type="CAUSAL_LM")
    return get_peft_model(model, config)


def lora_modules(peft_model):
    """Each adapted projection, the first layer's first, q_proj before v_proj."""
    layers = peft_model.base_model.model.model.layers
    for layer in layers:
        for target in TARGETS:
            yield getattr(layer.self_attn, target)


def draw_adapters(peft_model):
    with torch.no_grad():
        for module in lora_modules(peft_model):
            a = module.lora_A["default"].weight
            fresh = torch.empty(a.shape)
            torch.nn.init.kaiming_uniform_(fresh, a=math.sqrt(5))
            a.copy_(fresh)


def answer_loss(logits, labels):
    vocab = logits.shape[-1]
    return F.cross_entropy(logits[:, :-1].reshape(-1, vocab), labels[:, 1:].reshape(-1),
                           ignore_index=IGNORE)


def train(peft_model, encoder, train_sums, steps, batch_size, lr):
    trainable = [p for p in peft_model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=lr)
    losses = []
    for _ in range(steps):
        picks = torch.randint(0, len(train_sums), (batch_size,)).tolist()
        ids, labels = batch([encoder.example(train_sums[i]) for i in picks], encoder.eos)
        loss = answer_loss(peft_model(input_ids=ids).logits, labels)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(loss.item())
    return losses


def own_numbers(model):
    return sum(p.numel() for p in model.parameters())


def step(title):
    print(f"## {title}")


def narrative(seed):
    base, encoder = tiny()
    own = own_numbers(base)
    model = with_adapters(base)
    torch.manual_seed(seeded(seed, SEED))
    train_sums, held_out = split()
    print("# Chapter 23: Teaching SmolLM2 arithmetic with LoRA")
    print()
    step("The task: sums, and a held-out set never trained on")
    print(f"sums: {len(train_sums) + len(held_out)}, held out: {len(held_out)}, "
          f"trained on: {len(train_sums)}")
    print("the first held-out sums: " + ", ".join(f"{a} + {b}" for a, b in held_out[:5]))
    both = len(set(held_out) & set(train_sums))
    print(f"held-out sums among the training sums: {both}")
    ids, prompt_len = encoder.example(EXAMPLE)
    print(f"the question {json.dumps(question(EXAMPLE))} and a new line: {prompt_len} tokens, "
          "labelled -100 (not learned)")
    print(f"the answer {json.dumps(answer(EXAMPLE))} and the end of the reply: "
          f"{len(ids) - prompt_len} tokens, learned")
    print()
    step("Low-rank adapters beside the queries and the values")
    draw_adapters(model)
    print(f"rank {RANK}, alpha {ALPHA}, scale alpha / r = {ALPHA / RANK:.1f}")
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    layers = len(model.base_model.model.model.layers)
    print(f"tiny checkpoint ({layers} layers): {trainable} numbers train, {own} stay frozen")
    smollm2 = 30 * (RANK * (576 + 576) + RANK * (576 + 192))
    print(f"SmolLM2-135M (30 layers): {smollm2} numbers train")
    print()
    example = torch.tensor([ids])
    with torch.no_grad():
        before = model(input_ids=example).logits
    step("A short run on the tiny checkpoint, its losses PyTorch + PEFT's")
    print(f"{TINY_STEPS} steps of {BATCH} questions, AdamW at learning rate {TINY_LR}, "
          "the loss on the answers' tokens")
    losses = train(model, encoder, train_sums, TINY_STEPS, BATCH, TINY_LR)
    for i, loss in enumerate(losses):
        print(f"step {i + 1}: loss {loss:.4f}")
    print()
    step("The adapters merged into the weights")
    with torch.no_grad():
        beside = model(input_ids=example).logits
        merged = model.merge_and_unload()(input_ids=example).logits
    moved = (beside - before).abs().max().item()
    apart = (merged - beside).abs().max().item()
    print(f"the trained adapters moved the logits of {json.dumps(question(EXAMPLE))}: "
          f"{moved > 0}")
    print("merged into the weights, the same logits within rounding: "
          f"{apart <= 1e-4 * beside.abs().max().item()}")
    print()


def fixtures():
    """PEFT's trained adapter and its logits; PEFT's logits with the course's adapter."""
    base, encoder = tiny()
    model = with_adapters(base)
    torch.manual_seed(SEED)
    train_sums, _ = split()
    draw_adapters(model)
    train(model, encoder, train_sums, TINY_STEPS, BATCH, TINY_LR)
    ids, _ = encoder.example(EXAMPLE)
    example = torch.tensor([ids])
    peft_dir = os.path.join(FIXTURES, "peft")
    model.save_pretrained(peft_dir)
    os.remove(os.path.join(peft_dir, "README.md"))  # PEFT's model card: not needed here
    # The base model's path relative to the workspace, not this machine's.
    config_path = os.path.join(peft_dir, "adapter_config.json")
    with open(config_path) as f:
        config = json.load(f)
    config["base_model_name_or_path"] = os.path.relpath(TINY, ROOT)
    with open(config_path, "w") as f:
        json.dump(config, f, indent=2, sort_keys=True)
        f.write("\n")
    with torch.no_grad():
        logits = model(input_ids=example).logits
    save_file({"ids": example, "logits": logits.contiguous()},
              os.path.join(peft_dir, "logits.safetensors"))
    ours = os.path.join(FIXTURES, "ours")
    subprocess.run(["cargo", "run", "-q", "-p", "ch23-lora", "--example", "save_tiny", "--",
                    ours], cwd=ROOT, check=True)
    base, _ = tiny()
    loaded = PeftModel.from_pretrained(base, ours)
    with torch.no_grad():
        logits = loaded(input_ids=example).logits
    save_file({"ids": example, "logits": logits.contiguous()},
              os.path.join(FIXTURES, "ours-by-peft.safetensors"))
    print(f"wrote {peft_dir} and {ours}-by-peft.safetensors")


def real_losses(path):
    base, encoder = real(path)
    model = with_adapters(base)
    torch.manual_seed(SEED)
    train_sums, _ = split()
    draw_adapters(model)
    losses = train(model, encoder, train_sums, REAL_STEPS, REAL_BATCH, REAL_LR)
    out = {"steps": REAL_STEPS, "batch": REAL_BATCH, "lr": REAL_LR, "losses": losses,
           "made_on": {"torch": torch.__version__,
                       "transformers": __import__("transformers").__version__,
                       "peft": __import__("peft").__version__}}
    with open(os.path.join(FIXTURES, "real_losses.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print(json.dumps(losses))


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def greedy(model, ids, eos):
    """The new ids of greedy decoding after `ids`, the end token kept when it comes."""
    out = model.generate(torch.tensor([ids]), max_new_tokens=ANSWER_TOKENS, do_sample=False,
                         temperature=None, top_k=None, top_p=None, eos_token_id=eos,
                         pad_token_id=eos)
    return out[0, len(ids):].tolist()


def real_answers(path):
    # Chapter 20's patch (the course's RoPE tables) and its record of the machine; imported
    # here, since that module turns gradients off for the whole process.
    from ch20_real_model import patch_rope, versions

    base, encoder = real(path)
    model = PeftModel.from_pretrained(base, TRAINED).merge_and_unload().eval()
    torch.manual_seed(SEED)
    _, held_out = split()
    sums = held_out[:ANSWERS]
    prompts = [encoder.encode(encoder.prompt(s)) for s in sums]
    with torch.no_grad():
        unpatched = [greedy(model, ids, encoder.eos) for ids in prompts]
        patch_rope(model)
        patched = [greedy(model, ids, encoder.eos) for ids in prompts]
    answers = []
    for s, ids, new, plain in zip(sums, prompts, patched, unpatched):
        reply = new[:-1] if new and new[-1] == encoder.eos else new
        answers.append({"question": question(s), "prompt_ids": ids, "greedy": new,
                        "reply": encoder.decode(reply), "greedy_unpatched": plain})
    adapter = {name: sha256(os.path.join(TRAINED, name))
               for name in ("adapter_config.json", "adapter_model.safetensors")}
    out = {"seed": SEED, "max_new_tokens": ANSWER_TOKENS, "eos": encoder.eos,
           "adapter": os.path.relpath(TRAINED, ROOT), "adapter_sha256": adapter,
           "model": os.path.basename(path), "answers": answers,
           "made_on": dict(versions(), peft=__import__("peft").__version__)}
    target = os.path.join(FIXTURES, "real_answers.json")
    with open(target, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    same = sum(a["greedy"] == a["greedy_unpatched"] for a in answers)
    print(f"wrote {os.path.relpath(target, ROOT)}: {len(answers)} answers, "
          f"{same} the same without the RoPE patch")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--fixtures", action="store_true")
    parser.add_argument("--real", metavar="GGUF")
    parser.add_argument("--answers", metavar="GGUF")
    args = parser.parse_args()
    if args.fixtures:
        fixtures()
    elif args.answers:
        real_answers(args.answers)
    elif args.real:
        real_losses(args.real)
    else:
        narrative(args.seed)


if __name__ == "__main__":
    sys.exit(main())
