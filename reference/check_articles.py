"""Check that every block the articles print appears in our expected output.

    python reference/check_articles.py

For each chapter, reference/article_prints/chNN-slug.txt holds the blocks of
output printed in the articles (entries separated by a line `----`), and
reference/expected/chNN-slug.txt is the stdout of reference/chNN_slug.py.
Each block must occur in the expected output (at least as many times as it is
listed, so two identical article prints need two prints of ours).

Comparison is after normalising both sides:
  * `, grad_fn=<...>` suffixes are removed: the articles ran with autograd on,
    our scripts run without it (see the scripts' headers);
  * all whitespace is removed: the article text mangled indentation and, in
    seed 004, padded some tensors with a space for a minus sign that is not
    there (`tensor([ 0.2912,  0.0106, ...`).
Anything else that differs (a digit, a label, a bracket) fails the check.
Exit status 0 when every block is found, 1 otherwise.
"""
import pathlib
import re
import sys

HERE = pathlib.Path(__file__).resolve().parent
CHAPTERS = [
    "ch01-embeddings",
    "ch02-dot-product",
    "ch03-softmax",
    "ch04-trainable",
    "ch05-causal",
    "ch06-multihead-wrapper",
    "ch07-multihead-split",
    "ch08-cross-attention",
]
GRAD_FN = re.compile(r",\s*grad_fn=<\w+>")
WHITESPACE = re.compile(r"\s+")


def normalise(text):
    return WHITESPACE.sub("", GRAD_FN.sub("", text))


def read_blocks(path):
    text = path.read_text(encoding="utf-8")
    if not text.strip():
        return []
    return [b.strip("\n") for b in re.split(r"(?m)^----$", text)]


def main():
    failures = 0
    total = 0
    for name in CHAPTERS:
        blocks = read_blocks(HERE / "article_prints" / f"{name}.txt")
        expected = normalise((HERE / "expected" / f"{name}.txt").read_text(encoding="utf-8"))
        wanted = {}
        for b in blocks:
            wanted.setdefault(normalise(b), []).append(b)
        for key, originals in wanted.items():
            total += len(originals)
            found = expected.count(key)
            if found < len(originals):
                failures += 1
                print(f"FAIL {name}: block found {found} time(s), wanted {len(originals)}:")
                print("    " + originals[0].replace("\n", "\n    "))
        print(f"{name}: {len(blocks)} article block(s) checked")
    if failures:
        print(f"{failures} block(s) missing")
        return 1
    print(f"all {total} article blocks reproduced")
    return 0


if __name__ == "__main__":
    sys.exit(main())
