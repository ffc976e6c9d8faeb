#!/usr/bin/env python3
"""An mdBook preprocessor: removes the indentation that every line of a code block shares.

mdBook's `{{#include file:anchor}}` keeps the lines of an anchor as they are in the source,
so code taken from inside a function or an `impl` would start 4 or 8 columns to the right,
and its long lines would run past the code column. This runs after mdBook's own `links`
preprocessor (which expands the includes) and, in every fenced code block of every page,
removes the leading spaces common to all of its non-blank lines. Nothing else changes.

mdBook calls `dedent-code.py supports RENDERER` first (exit 0: yes), then pipes
`[context, book]` as JSON on stdin and reads the book back on stdout.
"""
import json
import re
import sys

FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})")


def dedent_block(lines, keep):
    """Removes the leading spaces shared by every non-blank line, beyond the `keep` spaces
    of the fence itself (a code block inside a list item keeps the item's indentation)."""
    indents = [len(l) - len(l.lstrip(" ")) for l in lines if l.strip()]
    cut = max(min(indents, default=keep) - keep, 0)
    return [l[:keep] + l[keep + cut:] if l.strip() else l for l in lines]


def dedent_code_blocks(markdown):
    out, block, fence, keep = [], None, None, 0
    for line in markdown.split("\n"):
        m = FENCE.match(line)
        if block is None:
            out.append(line)
            if m:
                block, fence, keep = [], m.group(2), len(m.group(1))
        elif m and m.group(2).startswith(fence) and not line.strip()[len(m.group(2)):].strip():
            out += dedent_block(block, keep)
            out.append(line)
            block = None
        else:
            block.append(line)
    if block is not None:  # an unclosed fence: leave it as it was
        out += block
    return "\n".join(out)


def walk(items):
    for item in items:
        chapter = item.get("Chapter") if isinstance(item, dict) else None
        if chapter:
            chapter["content"] = dedent_code_blocks(chapter["content"])
            walk(chapter.get("sub_items", []))


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "supports":
        sys.exit(0)
    _context, book = json.load(sys.stdin)
    walk(book.get("items", book.get("sections", [])))
    json.dump(book, sys.stdout)


if __name__ == "__main__":
    main()
