"""Chapter 24: attention across machines, ring attention's one-process simulation in tensor ops (PyTorch reference).

The chapter cuts a causal attention of 16 tokens, 4 heads of 8, across 4 ranks and runs
each rank's steps in one process. This script computes the same thing with PyTorch's
tensor ops:

  * each block (a chunk of queries against a chunk of keys) is softmax(q @ k^T / sqrt(d))
    @ v with the causal mask inside a diagonal block, and its log-sum-exp
    torch.logsumexp; a block whose keys all come after its queries is skipped;
  * a rank's blocks are merged in the ring's order (at step s rank r holds the keys of
    rank r - s), two at a time, by chapter 17's max-rescaled merge:
    m = max(l1, l2), l = m + log(exp(l1 - m) + exp(l2 - m)),
    out = exp(l1 - l) * o1 + exp(l2 - l) * o2;
  * contiguous shards (rank r holds chunk r of 4) and zigzag shards (chunks r and 7 - r of
    8); one query row's merge is printed step by step;
  * query-key products and bytes per rank at 1024 tokens, 8 heads of 64, counted from the
    causal mask itself;
  * all-gather and Ulysses (two all-to-alls, written with torch.chunk and torch.cat), which
    the script checks equal the ring and one process's attention bit for bit;
  * tensor-parallel heads: x [16, 16] and four projections drawn after v, each rank's
    partial output for its heads, their sum in rank order;
  * a training step across ranks: after torch.manual_seed(S) again, chapter 22's Llama
    (reference/ch22_training_check.py's, its small test size: 2 layers, 2 heads of 16,
    width 32, over 64 token ids) and a batch torch.randint(64, (4, 17)), inputs the first
    16 ids and targets the last 16. Its step as chapter 22 takes it (cross-entropy,
    clip_grad_norm_(1.0), fused AdamW with betas (0.9, 0.99), weight decay 0.1 on the
    matrices, lr 1e-3), with the attention core replaced by the zigzag ring above
    (autograd through its blocks and merges): its loss, gradient norm and a few weights
    before and after. The same step with chapter 22's own core (one softmax) is its
    comparison: the loss within 1e-6, every gradient within (T + 2W)·4 float32 steps of
    its largest element, every weight within lr·|f(c1·g1) − f(c2·g2)| plus 16 float32
    steps of the larger of the weight and lr, f(g) = g / (|g| + 1e-8) and c the clip's
    factor (AdamW's first step as a function of the gradient; its seven roundings on
    each side). The count of numbers the chapter gathers for the sums over
    the sequence is (vocab + 4·d + layers·(12·d + 3·d_ff))·batch·tokens.

With --gloo it prints one line instead: it starts 4 gloo processes on 127.0.0.1 and checks
that PyTorch's own ring core (torch.distributed.tensor.experimental's
_templated_ring_attention with the CPU flash operator; the public context_parallel() does
not run on the CPU in 2.13), with its head-tail load balance, agrees with the simulation's
zigzag ring within a derived tolerance. Run it when regenerating the expected text, not in
CI (python reference/ch24_distributed.py --gloo).

The chapter's kernel (chapter 16's online softmax, tile by tile) adds in another order than
softmax here: its numbers agree with these to about 1e-7, far below the 4 printed
decimals. Gradients are off. Each step prints a `## ...` heading, its output and one empty
line.
"""
import argparse
import math

import torch

torch.set_grad_enabled(False)
torch.set_num_threads(1)


def seed_value(text):
    """A seed as torch.manual_seed accepts it and the chapter binary too: 0 to 2**64 - 1."""
    seed = int(text)
    if not 0 <= seed < 2**64:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 2**64 - 1")
    return seed


parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--seed", type=seed_value, metavar="S",
                    help="use S for every manual_seed call instead of the chapter's seed")
parser.add_argument("--gloo", action="store_true",
                    help="instead of the chapter's text, check PyTorch's own ring core over 4 "
                         "gloo processes on 127.0.0.1 against the simulation")
ARGS = parser.parse_args()
SEED = ARGS.seed


def seed_or(default_seed):
    return default_seed if SEED is None else SEED


WORLD = 4
T, H, D = 16, 4, 16
D_MODEL = 16
ARTICLE_T, ARTICLE_H, ARTICLE_D = 1024, 8, 64
HEAD = 0


def step(title):
    print(f"## {title}")


def end_step():
    print()


def chunks_of(layout, rank):
    return [rank] if layout == "contiguous" else [rank, 2 * WORLD - 1 - rank]


def n_chunks(layout):
    return WORLD if layout == "contiguous" else 2 * WORLD


def kind(q_chunk, kv_chunk):
    if kv_chunk > q_chunk:
        return "skipped"
    return "diagonal" if kv_chunk == q_chunk else "full"


def attend_block(q, k, v, q_chunk, kv_chunk):
    """(out, lse) of one block, or None when the causal mask hides all of it."""
    how = kind(q_chunk, kv_chunk)
    if how == "skipped":
        return None
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if how == "diagonal":
        n = q.shape[-2]
        hidden = torch.ones(n, n, dtype=torch.bool).triu(1)
        scores = scores.masked_fill(hidden, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v, torch.logsumexp(scores, dim=-1)


def merge(a, b):
    """Chapter 17's merge of two partial results by their log-sum-exps."""
    (o1, l1), (o2, l2) = a, b
    m = torch.maximum(l1, l2)
    lse = m + torch.log(torch.exp(l1 - m) + torch.exp(l2 - m))
    return torch.exp(l1 - lse).unsqueeze(-1) * o1 + torch.exp(l2 - lse).unsqueeze(-1) * o2, lse


def block_of(t, chunk, length):
    return t[:, :, chunk * length:(chunk + 1) * length]


def ring(q, k, v, layout, on_step=None):
    """Every rank's steps in ring order; the ranks' outputs put back in sequence order."""
    length = T // n_chunks(layout)
    out = torch.empty_like(q)
    for rank in range(WORLD):
        mine = chunks_of(layout, rank)
        running = [None] * len(mine)
        for s in range(WORLD):
            source = (rank - s) % WORLD
            for i, q_chunk in enumerate(mine):
                for kv_chunk in chunks_of(layout, source):
                    part = attend_block(block_of(q, q_chunk, length), block_of(k, kv_chunk, length),
                                        block_of(v, kv_chunk, length), q_chunk, kv_chunk)
                    if part is None:
                        continue
                    running[i] = part if running[i] is None else merge(running[i], part)
            if on_step is not None:
                on_step(rank, s, running)
        for i, q_chunk in enumerate(mine):
            out[:, :, q_chunk * length:(q_chunk + 1) * length] = running[i][0]
    return out


def causal_attention(q, k, v):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    n = q.shape[-2]
    scores = scores.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def ring_step(q, k, v, layout, one_process):
    length = T // n_chunks(layout)
    token = T - 1
    chunk = token // length
    rank = next(r for r in range(WORLD) if chunk in chunks_of(layout, r))
    slot = chunks_of(layout, rank).index(chunk)
    row = token - chunk * length
    lines = []

    def on_step(r, s, running):
        if r != rank:
            return
        source = (r - s) % WORLD
        kinds = ", ".join(kind(chunk, c) for c in chunks_of(layout, source))
        if running[slot] is None:
            lines.append(f"step {s}: keys of rank {source} ({kinds}): nothing yet")
            return
        o, l = running[slot]
        lines.append(f"step {s}: keys of rank {source} ({kinds}): log-sum-exp so far {l[0, HEAD, row].item():.4f}, out:")
        lines.append(f"{o[0, HEAD, row]}")

    out = ring(q, k, v, layout, on_step)
    step(f"The ring, {layout} shards")
    held = ", ".join(f"{chunks_of(layout, r)}" for r in range(WORLD))
    print(f"{n_chunks(layout)} chunks of {length} tokens; ranks 0 to {WORLD - 1} hold chunks {held}")
    print(f"token {token}, head {HEAD} lives on rank {rank}; its merge, step by step:")
    for line in lines:
        print(line)
    print("one process's causal attention, same row:")
    print(one_process[0, HEAD, token])
    print(f"whole output within 1e-6 of one process: {(out - one_process).abs().max().item() < 1e-6}")
    end_step()
    return out


def products(layout, rank):
    """Query-key pairs the causal mask lets through for the rank's queries, every head."""
    length = ARTICLE_T // n_chunks(layout)
    visible = torch.ones(ARTICLE_T, ARTICLE_T, dtype=torch.bool).tril()
    rows = torch.cat([torch.arange(c * length, (c + 1) * length) for c in chunks_of(layout, rank)])
    return int(visible[rows].sum()) * ARTICLE_H


def ring_bytes(kv_heads):
    block = ARTICLE_T // WORLD * kv_heads * ARTICLE_D * 4
    return (WORLD - 1) * 2 * block


def imbalance_step():
    step(f"Causal work per rank, {ARTICLE_T} tokens, {ARTICLE_H} heads of {ARTICLE_D}, {WORLD} ranks")
    for layout in ["contiguous", "zigzag"]:
        counts = [products(layout, r) for r in range(WORLD)]
        print(f"{layout} query-key products: {' / '.join(f'{c:,}' for c in counts)}")
        print(f"  the busiest rank computes {max(counts) / min(counts):.2f} times the least busy")
    print(f"bytes each rank sends in a ring pass (keys and values, float32): {ring_bytes(ARTICLE_H):,}")
    print(f"  with grouped-query attention, 2 key/value heads for the {ARTICLE_H} query heads: "
          f"{ring_bytes(2):,}")
    end_step()


def transfer_step(q, k, v, ring_out):
    # All-gather: every rank has every block before attending, then attends in ring order.
    gathered = ring(q, k, v, "zigzag")
    everything = 2 * ARTICLE_T * ARTICLE_H * ARTICLE_D * 4
    sent = f"{ring_bytes(ARTICLE_H):,}"
    step(f"Two ways to move keys and values, {ARTICLE_T} tokens, {ARTICLE_H} heads of {ARTICLE_D}")
    print(f"bytes of keys and values one rank holds: all-gather {everything:,}, "
          f"ring pass {2 * everything // WORLD:,}")
    print(f"bytes one rank sends: all-gather {sent}, ring pass {sent}")
    print(f"messages: all-gather one collective before attending, ring pass {WORLD - 1} sends")
    print("  each beside one step's attention")
    print(f"all-gather equals the ring pass bit for bit (zigzag shards): {torch.equal(gathered, ring_out)}")
    end_step()


def ulysses(q, k, v):
    def to_heads(t):
        sent = [list(s.chunk(WORLD, dim=1)) for s in t.chunk(WORLD, dim=2)]
        return [torch.cat([sent[i][j] for i in range(WORLD)], dim=2) for j in range(WORLD)]

    qh, kh, vh = to_heads(q), to_heads(k), to_heads(v)
    sent = [list(causal_attention(qh[r], kh[r], vh[r]).chunk(WORLD, dim=2)) for r in range(WORLD)]
    shards = [torch.cat([sent[j][i] for j in range(WORLD)], dim=1) for i in range(WORLD)]
    return torch.cat(shards, dim=2)


def ulysses_step(q, k, v, one_process):
    out = ulysses(q, k, v)
    step("Ulysses: two all-to-alls")
    print(f"before: [1, {H}, {T // WORLD}, {D}] per rank (its tokens, every head)")
    print(f"after the first all-to-all: [1, {H // WORLD}, {T}, {D}] (every token, its heads)")
    print(f"equals one process bit for bit: {torch.equal(out, one_process)}")
    print(f"2 key/value heads on {WORLD} ranks: each key/value head copied to {WORLD // 2} ranks")
    end_step()


def rank_partial(x, w_query, w_key, w_value, w_out, rank, world):
    mine = H // world
    wide = D * mine

    def split(w):
        return (x @ w[:, rank * wide:(rank + 1) * wide]).reshape(T, mine, D).transpose(0, 1).unsqueeze(0)

    context = causal_attention(split(w_query), split(w_key), split(w_value))
    context = context.squeeze(0).transpose(0, 1).reshape(T, wide)
    return context @ w_out[rank * wide:(rank + 1) * wide]


def tensor_parallel_step():
    x = torch.randn(T, D_MODEL)
    scale = 1.0 / math.sqrt(D_MODEL)
    w_query = torch.randn(D_MODEL, H * D) * scale
    w_key = torch.randn(D_MODEL, H * D) * scale
    w_value = torch.randn(D_MODEL, H * D) * scale
    w_out = torch.randn(H * D, D_MODEL) * scale
    ws = (w_query, w_key, w_value, w_out)
    partials = [rank_partial(x, *ws, r, WORLD) for r in range(WORLD)]
    fixed = partials[0]
    for p in partials[1:]:
        fixed = fixed + p
    again = partials[0]
    for p in partials[1:]:
        again = again + p
    one = rank_partial(x, *ws, 0, 1)
    step("Tensor-parallel heads")
    print(f"x: [{T}, {D_MODEL}]; each rank: {H // WORLD} of the {H} heads, "
          f"{H // WORLD * D} rows of the output projection")
    print("rank 0's partial output, token 0:")
    print(partials[0][0])
    print("the sum in rank order, token 0:")
    print(fixed[0])
    print(f"the same sum again, in rank order, equal bit for bit: {torch.equal(fixed, again)}")
    print(f"within 1e-5 of one process's single all-heads product: {(fixed - one).abs().max().item() < 1e-5}")
    end_step()


def main():
    print("# Chapter 24: attention across machines")
    print()
    torch.manual_seed(seed_or(24))
    q = torch.randn(1, H, T, D)
    k = torch.randn(1, H, T, D)
    v = torch.randn(1, H, T, D)
    step(f"Queries, keys and values (manual_seed({seed_or(24)}))")
    print(f"q.shape: {q.shape}")
    print(f"k.shape: {k.shape}")
    print(f"v.shape: {v.shape}")
    print(f"{WORLD} ranks, causal attention")
    end_step()
    one_process = causal_attention(q, k, v)
    ring_step(q, k, v, "contiguous", one_process)
    imbalance_step()
    zigzag = ring_step(q, k, v, "zigzag", one_process)
    transfer_step(q, k, v, zigzag)
    ulysses_step(q, k, v, one_process)
    tensor_parallel_step()
    training_step()


STEP_CONFIG = dict(context=16, d_model=32, n_layers=2, n_heads=2, batch=4)
STEP_VOCAB = 64
STEP_LR = 1e-3
U = 2.0 ** -24


def step_with(core, seed):
    """Chapter 22's step of its small Llama, its attention core `core`: the loss, the
    gradients, their norm, the model after the step and its weights before."""
    import ch22_training_check as ch22
    import torch.nn.functional as F

    torch.manual_seed(seed)
    model = ch22.build("llama", STEP_VOCAB, STEP_CONFIG)
    ids = torch.randint(STEP_VOCAB, (STEP_CONFIG["batch"], STEP_CONFIG["context"] + 1))
    x, y = ids[:, :-1], ids[:, 1:]
    before = [p.detach().clone() for p in model.parameters()]
    saved, ch22.attention_core = ch22.attention_core, core
    try:
        with torch.enable_grad():
            logits = model(x)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.reshape(-1))
            loss.backward()
            grads = [p.grad.detach().clone() for p in model.parameters()]
            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            decay = [p for p in model.parameters() if p.dim() >= 2]
            no_decay = [p for p in model.parameters() if p.dim() < 2]
            optimizer = torch.optim.AdamW(
                [{"params": decay, "weight_decay": 0.1},
                 {"params": no_decay, "weight_decay": 0.0}],
                lr=STEP_LR, betas=(0.9, 0.99), fused=True)
            optimizer.step()
    finally:
        ch22.attention_core = saved
    return loss.item(), grads, norm.item(), model, before


def ring_core(q, k, v, hidden):
    """The zigzag ring as an attention core (its causal mask is the ring's own)."""
    return ring(q, k, v, "zigzag")


def clip_factor(grads):
    total = math.sqrt(sum(float((g.double() ** 2).sum()) for g in grads))
    return min(1.0 / (total + 1e-6), 1.0)


def weights_agree(ours, theirs, grads_ours, grads_theirs):
    c1, c2 = clip_factor(grads_ours), clip_factor(grads_theirs)
    for p1, p2, g1, g2 in zip(ours, theirs, grads_ours, grads_theirs):
        p1, p2, g1, g2 = (t.double() for t in (p1, p2, g1, g2))
        f1 = c1 * g1 / ((c1 * g1).abs() + 1e-8)
        f2 = c2 * g2 / ((c2 * g2).abs() + 1e-8)
        size = torch.maximum(p1.abs(), p2.abs()).clamp(min=STEP_LR)
        bound = STEP_LR * (f1 - f2).abs() * (1 + 1e-3) + 16 * U * size
        if not bool(((p1 - p2).abs() <= bound).all()):
            return False
    return True


def training_step():
    seed = seed_or(24)
    c = STEP_CONFIG
    d, layers = c["d_model"], c["n_layers"]
    d_ff = -(-(-(-8 * d // 3)) // 8) * 8
    loss, grads, norm, model, before = step_with(ring_core, seed)
    import ch22_training_check as ch22
    one_loss, one_grads, _, one_model, _ = step_with(ch22.attention_core, seed)
    weights = [p.detach() for p in model.parameters()]
    one_weights = [p.detach() for p in one_model.parameters()]
    steps = (T + 2 * WORLD) * 4
    step("A training step across ranks")
    print(f"chapter 22's Llama: {layers} layers, {c['n_heads']} heads of {d // c['n_heads']}, "
          f"width {d}, {STEP_VOCAB} token ids (manual_seed({seed}))")
    print(f"a batch of {c['batch']} sequences of {c['context']} tokens, zigzag shards on "
          f"{WORLD} ranks:")
    length = c["context"] // (2 * WORLD)
    for r in range(WORLD):
        positions = [t for ch in chunks_of("zigzag", r) for t in range(ch * length, (ch + 1) * length)]
        print(f"  rank {r}: positions {positions}")
    per_token = STEP_VOCAB + 4 * d + layers * (12 * d + 3 * d_ff)
    parameters = sum(p.numel() for p in model.parameters())
    print(f"numbers gathered on every rank for the sums over the sequence: "
          f"{per_token * c['batch'] * c['context']:,}")
    print(f"numbers in the gradients, for comparison: {parameters:,}")
    print(f"loss: {loss:.4f}")
    print(f"gradient norm before clipping: {norm:.4f}")
    print("layers.0.attn.w_query.weight[0, :6] before the step:")
    print(before[2][0, :6])
    print(f"after one step of AdamW (lr {STEP_LR}):")
    print(weights[2][0, :6])
    print("against chapter 22's one-process step, whose attention takes one softmax:")
    print(f"  loss within 1e-6: {abs(loss - one_loss) < 1e-6}")
    agree = all(float((a - b).abs().max()) <= steps * U * float(b.abs().max())
                for a, b in zip(grads, one_grads))
    print(f"  every gradient within {steps} float32 steps of its largest: {agree}")
    print(f"  every weight within the gap AdamW's step makes of the gradients' gaps: "
          f"{weights_agree(weights, one_weights, grads, one_grads)}")
    end_step()


def gloo_rank(rank, port, q, k, v, queue):
    """One process of the --gloo check: PyTorch's ring core on this rank's zigzag shard."""
    import torch.distributed as dist
    from torch.distributed.tensor.experimental._context_parallel import _attention

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=WORLD)
    length = T // (2 * WORLD)
    shard = lambda t: torch.cat([block_of(t, c, length) for c in chunks_of("zigzag", rank)], dim=2)
    # Head-tail load balance (rank r holds chunks r and 2W-1-r), keys and values all-gathered:
    # PyTorch's defaults; the CPU flash operator computes each block and its log-sum-exp.
    _attention._cp_options.enable_load_balance = True
    out, *_ = _attention._templated_ring_attention(
        dist.group.WORLD, 2, torch.ops.aten._scaled_dot_product_flash_attention_for_cpu,
        shard(q), shard(k), shard(v), is_causal=True)
    queue.put((rank, out.numpy().copy()))  # plain numbers: the process ends before they are read
    dist.barrier()
    dist.destroy_process_group()


def gloo_check():
    """PyTorch's ring core over 4 gloo processes against the simulation's zigzag ring."""
    import socket
    import torch.multiprocessing as mp

    torch.manual_seed(seed_or(24))
    q, k, v = (torch.randn(1, H, T, D) for _ in range(3))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    context = mp.get_context("spawn")
    queue = context.Queue()
    processes = [context.Process(target=gloo_rank, args=(r, port, q, k, v, queue))
                 for r in range(WORLD)]
    for p in processes:
        p.start()
    shards = {rank: torch.from_numpy(out) for rank, out in (queue.get(timeout=120) for _ in range(WORLD))}
    for p in processes:
        p.join(timeout=120)
    length = T // (2 * WORLD)
    out = torch.empty_like(q)
    for rank, shard in shards.items():
        for i, c in enumerate(chunks_of("zigzag", rank)):
            out[:, :, c * length:(c + 1) * length] = shard[:, :, i * length:(i + 1) * length]
    simulated = ring(q, k, v, "zigzag")
    # Both merge at most 2W partial results of size about 1 in another order, each block's
    # softmax and sums over at most T keys rounded differently: (T + 2W) float32 steps of
    # 2^-24 each, times 4 for the exponentials, bound the gap.
    bound = (T + 2 * WORLD) * 4 * 2.0 ** -24
    gap = (out - simulated).abs().max().item()
    print(f"PyTorch's ring core on {WORLD} gloo processes, zigzag shards, all-gathered keys "
          f"and values: largest gap to the simulation {gap:.1e}, within {bound:.1e}: {gap <= bound}")
    return gap <= bound


if __name__ == "__main__":
    if ARGS.gloo:
        raise SystemExit(0 if gloo_check() else 1)
    main()
