"""List printed float32 values that sit close to a rounding boundary.

    python reference/tools/rounding_margins.py [MAX_ULPS] > reference/rounding_margins.txt

Runs every chapter script with the tensor printer wrapped: each float32
tensor that gets printed is recorded together with the `## ...` heading it
appeared under. For every finite, non-zero element of a tensor that is not
all integers, we find the smallest k in 1, 2, 4, ... MAX_ULPS (default 4)
such that moving that one element by k ulps *of the tensor's largest
element* changes the tensor's printed text. (Rounding errors scale with the
terms that were summed, not with the result, so a small result of a sum
with cancellation is measured against the large ones.) An element that
flips within a few such ulps is fragile: another correct float32
implementation, summing in another order, may print a different last digit
there, and PyTorch itself does on other CPU kernels (see NOTES.md). Nothing
here changes what the scripts print.
"""
import builtins
import contextlib
import io
import pathlib
import runpy
import sys

import torch
import torch._tensor_str as tensor_str

HERE = pathlib.Path(__file__).resolve().parent.parent  # reference/


def ulp(x):
    """Distance from |x| to the next float32 up."""
    a = torch.tensor([abs(x)], dtype=torch.float32)
    return (torch.nextafter(a, torch.tensor([float("inf")])) - a).item()


def flip_distance(t, idx, max_steps, step):
    """Smallest k in 1, 2, 4, ... max_steps such that moving t[idx] by k * step
    (up or down) changes the printed text; None if none does."""
    base = tensor_str._str(t)
    x = t[idx].item()
    k = 1
    while k <= max_steps:
        for sign in (1, -1):
            u = t.clone()
            u[idx] = x + sign * k * step
            if u[idx].item() != x and tensor_str._str(u) != base:
                return sign * k
        k *= 2
    return None


def main():
    max_ulps = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    torch.set_grad_enabled(False)
    recorded = []
    original_str = tensor_str._str
    state = {"heading": ""}

    def recording_str(self, *, tensor_contents=None):
        if self.dtype == torch.float32 and not self.requires_grad:
            recorded.append((state["heading"], self.detach().clone()))
        return original_str(self, tensor_contents=tensor_contents)

    original_print = builtins.print

    def tracking_print(*args, **kwargs):
        if args and isinstance(args[0], str) and args[0].startswith("## "):
            state["heading"] = args[0]
        return original_print(*args, **kwargs)

    for script in sorted(HERE.glob("ch[0-9][0-9]_*.py")):
        recorded.clear()
        tensor_str._str = recording_str
        builtins.print = tracking_print
        argv, sys.argv = sys.argv, [str(script)]  # the script's own options: none
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                runpy.run_path(str(script), run_name="__main__")
        finally:
            tensor_str._str = original_str
            builtins.print = original_print
            sys.argv = argv
        torch.set_grad_enabled(False)

        print(f"# {script.name}")
        n_values = 0
        for heading, t in recorded:
            finite = t[torch.isfinite(t)]
            if finite.numel() and bool((finite == finite.round()).all()):
                continue  # all-integer tensors (masks, exact inputs) are exact
            flat = t.reshape(-1)
            # errors scale with the size of the terms that were summed, which the
            # largest element of the tensor stands in for
            step = ulp(finite.abs().max().item())
            for i in range(flat.numel()):
                x = flat[i].item()
                if x == 0 or x != x or x in (float("inf"), float("-inf")):
                    continue
                n_values += 1
                idx = tuple(int(j) for j in torch.unravel_index(torch.tensor(i), t.shape)) if t.dim() else ()
                d = flip_distance(t, idx, max_ulps, step)
                if d is not None:
                    print(f"{heading[3:]} | index {list(idx)} | value {x!r} | flips at {d:+d} ulp(max)")
        print(f"# {n_values} printed non-zero values checked")
        print()


if __name__ == "__main__":
    main()
