"""Makes course/src/platform/probe.json: the cases `course::platform` computes to tell whether
the numbers of this run are the reference platform's, taken unchanged from fixtures that
PyTorch 2.13.0 made on an Intel Xeon with AVX-512 (the reference platform).

    python scripts/make_platform_probe.py     # needs only Python: it reads committed fixtures

- `F.linear` with one to 32 outputs (tests/fixtures/room_fixtures.json, every linear case with
  at most 4,000 numbers): MKL picks its order of additions for a matrix product by the
  processor and by its own settings (`MKL_CBWR`), and on another code path several of these
  change in their last bits (the one with input [5, 16] and 8 outputs on an AMD EPYC).
- `softmax` of two long rows (tests/fixtures/ops_fixtures.json): PyTorch's AVX-512 build adds a
  row in 16 lanes, its AVX2 build (`ATEN_CPU_CAPABILITY=avx2`) in 8.
"""
import json
from pathlib import Path

root = Path(__file__).resolve().parent.parent
fixtures = root / "tests" / "fixtures"

SOFTMAX = ["softmax a row of 1000 dim=-1", "softmax a row of 1023 dim=-1"]


def cases_of(name):
    data = json.loads((fixtures / name).read_text())
    return data, data["cases"]


room, room_cases = cases_of("room_fixtures.json")
ops, ops_cases = cases_of("ops_fixtures.json")


def size(case):
    return sum(len(t["values"]) for t in case["inputs"]) + len(case["expected"]["values"])


chosen = [dict(c, source="room_fixtures.json") for c in room_cases
          if c["op"] == "linear" and size(c) <= 4000]
chosen += [dict(c, source="ops_fixtures.json") for c in ops_cases if c["name"] in SOFTMAX]
assert len(chosen) == 15 + len(SOFTMAX), len(chosen)
for case in chosen:
    case.pop("expected_repr", None)
    assert all("values" in t for t in case["inputs"]), case["name"]

out = {
    "made_by": "python scripts/make_platform_probe.py",
    "made_on": room["made_on"],
    "torch_version": room["torch_version"],
    "cases": chosen,
}
assert ops["made_on"] == room["made_on"]
path = root / "course" / "src" / "platform" / "probe.json"
path.write_text(json.dumps(out) + "\n")
print(f"wrote {path.relative_to(root)}: {len(chosen)} cases")
