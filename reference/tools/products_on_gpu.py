"""Run a chapter script with PyTorch's matrix products and softmaxes on a CUDA GPU.

    python reference/tools/products_on_gpu.py reference/ch04_trainable.py > ch04.gpu.txt
    diff reference/expected/ch04-trainable.txt ch04.gpu.txt

The script itself is unchanged: its tensors are still made, and its random numbers drawn,
on the CPU, and only `matmul`, `@`, `bmm`, `linear` and `softmax` move their inputs to the
GPU and bring the result back. That is what the chapters' CUDA back-end does (`--device
cuda`: our generator on the CPU, libtorch's kernels on the GPU), so the two outputs can be
compared line for line. PyTorch's own CUDA generator would draw other numbers, and then no
line would compare (see book/src/appendix-matching-pytorch.md). Needs a CUDA build of torch
and a GPU; NOTES.md says what it printed.
"""
import runpy
import sys

import torch
import torch.nn.functional as F


def on_gpu(op):
    """`op` with its tensor arguments on the GPU and its tensor result back on the CPU."""

    def wrapped(*args, **kwargs):
        args = [a.cuda() if isinstance(a, torch.Tensor) else a for a in args]
        kwargs = {k: v.cuda() if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()}
        out = op(*args, **kwargs)
        return out.cpu() if isinstance(out, torch.Tensor) else out

    return wrapped


for owner, name in [
    (torch.Tensor, "matmul"),
    (torch.Tensor, "__matmul__"),
    (torch, "matmul"),
    (torch.Tensor, "bmm"),
    (torch, "bmm"),
    (F, "linear"),
    (F, "softmax"),
    (torch, "softmax"),
    (torch.Tensor, "softmax"),
]:
    setattr(owner, name, on_gpu(getattr(owner, name)))

if __name__ == "__main__":
    sys.argv = sys.argv[1:]
    runpy.run_path(sys.argv[0], run_name="__main__")
