# Sourced by the scripts: each chapter's manifest, chapters/chNN-slug/chapter.toml (its keys
# are explained in CONTRIBUTING.md), read with sed: every key is on a line of its own.
#   source scripts/chapters.sh
#   chapters_where libtorch false              # the chapters whose manifest says so
#   chapter_value ch19-induction-heads page_run  # seed 7 (a string's quotes removed)
#   chapter_seeds ch01-embeddings              # 7 2026
chapters_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# The value of `key` in `chapter`'s manifest, without its comment and a string's quotes.
chapter_value() { # chapter key
  sed -n "s/^$2 = \([^#]*\).*/\1/p" "$chapters_root/chapters/$1/chapter.toml" |
    sed 's/[[:space:]]*$//; s/^"\(.*\)"$/\1/'
}

# Every chapter, in order, whose manifest gives `key` the value `value`.
chapters_where() { # key value
  local manifest chapter
  for manifest in "$chapters_root"/chapters/*/chapter.toml; do
    chapter=$(basename "$(dirname "$manifest")")
    if [ "$(chapter_value "$chapter" "$1")" = "$2" ]; then echo "$chapter"; fi
  done
}

# The seeds besides the articles' whose PyTorch output `chapter` commits, one per word.
chapter_seeds() { # chapter
  chapter_value "$1" seeds | tr -d '[]",'
}
