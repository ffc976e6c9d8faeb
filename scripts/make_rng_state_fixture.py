"""Makes shared/tests/fixtures/rng_state.json with real PyTorch 2.13.0: the bytes of
torch.get_rng_state() after a few seeds and draws, which the generator's `get_state` must
write byte for byte (shared/tests/rng_state.rs).

Each case: a seed, then draws of torch.rand(n) or torch.randn(n) one after another, then
the state; and the next draw, torch.rand(4), which a generator set from those bytes gives.
The cases cover a fresh seed (nothing drawn: the table not yet twisted), a seed above 2^32,
a spare normal kept by a scalar-path randn, and draws across a twist (624 words).

    python scripts/make_rng_state_fixture.py   # needs torch==2.13.0 (reference/requirements.txt)
"""
import json
import struct
from pathlib import Path

import torch

assert torch.__version__.startswith("2.13.0"), torch.__version__

CASES = [
    ("fresh seed", 7, []),
    ("a seed above 2^32", 2**40 + 5, []),
    ("after rand(3)", 7, [["rand", 3]]),
    ("a spare normal kept by randn(1)", 7, [["randn", 1]]),
    ("across a twist", 123, [["rand", 700], ["randn", 3]]),
    ("exactly one table drawn", 0, [["rand", 624]]),
]


def main():
    cases = []
    for name, seed, draws in CASES:
        torch.manual_seed(seed)
        for op, n in draws:
            getattr(torch, op)(n)
        state = torch.get_rng_state().numpy().tobytes()
        after = [f"0x{struct.unpack('<I', struct.pack('<f', v))[0]:08x}" for v in torch.rand(4).tolist()]
        cases.append({"name": name, "seed": seed, "draws": draws, "state": state.hex(), "then_rand4": after})
    out = Path(__file__).resolve().parent.parent / "shared/tests/fixtures/rng_state.json"
    out.write_text(json.dumps({"torch": torch.__version__, "cases": cases}, indent=1) + "\n")
    print(f"wrote {out}: {len(cases)} cases")


if __name__ == "__main__":
    main()
