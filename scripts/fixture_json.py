"""How the fixture scripts write tensors and numbers into JSON (the formats are in
tests/fixtures/README.md): float32 values as their bit patterns, so nothing is lost to
decimal printing; infinities and NaN, which JSON lacks, as strings."""
import math
import struct


def bits(t):
    """The values of `t` in row-major order: float32 as "0x%08x", bools and ints as JSON."""
    t = t.contiguous()
    values = t.flatten().tolist()
    if str(t.dtype) == "torch.float32":
        return [f"0x{struct.unpack('<I', struct.pack('<f', v))[0]:08x}" for v in values]
    if str(t.dtype) == "torch.bool":
        return [bool(v) for v in values]
    return [int(v) for v in values]


def enc(t):
    """A tensor as {"shape", "dtype", "values"}."""
    return {"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", ""), "values": bits(t)}


def num(x):
    """A number for JSON: inf, -inf and nan as the strings "inf", "-inf" and "nan"."""
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


def processor():
    """The processor this script runs on, for a fixture's "made_on": its model name and the CPU
    build PyTorch picked, e.g. "Intel(R) Xeon(R) ... (AVX512)". Fixtures that hold the bits
    of matrix products are the bits of this processor's MKL order; the tests assert them bit for
    bit on libtorch only where libtorch reproduces them (see course::platform)."""
    import platform

    import torch

    name = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as info:
            name = next(line.split(":", 1)[1].strip() for line in info if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{name} ({torch.backends.cpu.get_cpu_capability()})"
