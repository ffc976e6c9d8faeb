"""Rebuild reference/article_prints/*.txt from the article snapshots.

    python reference/tools/extract_article_prints.py SEEDS_DIR

SEEDS_DIR holds the four article snapshots (000_*.txt, 001_*, 003_*, 004_*);
they are not part of this repository. Every block is cut out of the article
text by line numbers (each checked against its first line), so no number is
typed by hand. The only edits are the article glitches listed in NOTES.md:
they are applied here, explicitly, and nowhere else.

Output format: one block per entry, entries separated by a line `----`.
Blocks keep the article's text, including `grad_fn=<...>` suffixes and mangled
indentation; check_articles.py normalises those when it compares.
"""
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent.parent  # reference/


def seed_lines(seeds_dir, prefix):
    (path,) = [p for p in seeds_dir.glob(prefix + "_*.txt") if not p.name.endswith(".plain.txt")]
    return path.read_text(encoding="utf-8").splitlines()


def block(lines, first, last, starts_with, drop=(), fix=None):
    """Lines first..last (1-based, inclusive), minus the line numbers in drop.

    fix: optional (old, new) string replacement for an in-line glitch.
    """
    assert lines[first - 1].startswith(starts_with), (first, lines[first - 1])
    out = [lines[n - 1] for n in range(first, last + 1) if n not in drop]
    assert not any(line.startswith("```") for line in out), (first, last)
    assert out[-1].strip(), (first, last)  # a block never ends on a blank line
    text = "\n".join(out)
    if fix is not None:
        old, new = fix
        assert old in text, fix
        text = text.replace(old, new)
    return text


def main():
    seeds_dir = pathlib.Path(sys.argv[1])
    s000 = seed_lines(seeds_dir, "000")
    s004 = seed_lines(seeds_dir, "004")
    # Seeds 001 and 003 print no outputs at all (001 shows only code; 003 has
    # no example inputs), so they contribute no blocks.

    chapters = {
        "ch01-embeddings": [
            block(s004, 63, 63, "{'Life': 0"),
            block(s004, 80, 80, "tensor([0, 4, 5, 2, 1, 3])"),
            # Glitch: the article ends the tensor with "]]))" (one ")" too many).
            block(s004, 99, 111, "tensor([[ 0.3374", fix=("0.2293]]))", "0.2293]])")),
        ],
        "ch02-dot-product": [
            block(s000, 38, 38, "tensor([0.9544"),
            block(s000, 45, 46, "Attention Weights: tensor([0.1455"),
            block(s000, 68, 69, "Attention Weights: tensor([0.1385"),  # torch.softmax
            block(s000, 80, 80, "tensor([0.4419"),
            block(s000, 94, 99, "tensor([[0.4421"),
        ],
        "ch03-softmax": [
            block(s000, 60, 61, "Attention Weights: tensor([0.1385"),  # naive softmax
            block(s000, 68, 69, "Attention Weights: tensor([0.1385"),  # torch.softmax
        ],
        "ch04-trainable": [
            block(s000, 128, 128, "Query vector:"),
            block(s000, 136, 137, "Keys shape:"),
            block(s000, 144, 144, "tensor(0.1376)"),
            block(s000, 150, 150, "tensor([ 0.2172"),
            block(s000, 159, 159, "tensor([0.1704"),
            block(s000, 165, 165, "tensor([0.2854"),
            block(s000, 192, 197, "tensor([[0.1278"),
            block(s000, 220, 225, "tensor([[-0.0739"),
            block(s004, 176, 178, "torch.Size([24])"),
            block(s004, 196, 197, "keys.shape: torch.Size([6, 24])"),
            block(s004, 218, 218, "tensor(11.1466)"),
            block(s004, 233, 233, "tensor([ 8.5808"),
            block(s004, 260, 260, "tensor([ 0.2912"),
            # Glitch: line 282 "tensor(torch.Size([28]))" is printed by no code.
            block(s004, 281, 286, "torch.Size([28])", drop=(282,)),
        ],
        "ch05-causal": [
            block(s000, 240, 246, "tensor([[0.1921, 0.1646"),
            block(s000, 253, 258, "tensor([[1., 0."),
            block(s000, 264, 270, "tensor([[0.1921, 0.0000"),
            block(s000, 277, 283, "tensor([[1.0000"),
            block(s000, 290, 296, "tensor([[0.2899"),
            block(s000, 302, 308, "tensor([[1.0000"),
            block(s000, 313, 319, "tensor([[2.0000"),
            block(s000, 325, 325, "torch.Size([2, 6, 3])"),
            block(s000, 360, 360, "context_vecs shape:  torch.Size([2, 6, 2])"),
        ],
        "ch06-multihead-wrapper": [
            block(s000, 393, 406, "tensor([[[-0.5740"),
            block(s004, 326, 326, "torch.Size([3, 24])"),
            block(s004, 350, 350, "torch.Size([3, 16, 6])"),
            block(s004, 367, 368, "multihead_keys.shape: torch.Size([3, 24, 6])"),
            block(s004, 385, 386, "multihead_keys.shape: torch.Size([3, 6, 24])"),
        ],
        # No article prints anything for chapter 7: seed 000 never runs its
        # MultiHeadAttention, seed 001 shows no outputs, seed 003 has no inputs.
        "ch07-multihead-split": [],
        "ch08-cross-attention": [
            # Glitch: line 452 reads "queries.shape: torch.Size([24])" but the
            # code prints "query.shape", query_2.shape; the block is cut there.
            block(s004, 451, 451, "embedded_sentence.shape:"),
            block(s004, 453, 454, "keys.shape: torch.Size([6, 24])"),
            block(s004, 474, 475, "keys.shape: torch.Size([8, 24])"),
        ],
    }

    out_dir = HERE / "article_prints"
    out_dir.mkdir(exist_ok=True)
    for name, blocks in chapters.items():
        text = "\n----\n".join(blocks)
        (out_dir / f"{name}.txt").write_text(text + "\n" if text else "", encoding="utf-8")
        print(f"wrote article_prints/{name}.txt ({len(blocks)} blocks)")


if __name__ == "__main__":
    main()
