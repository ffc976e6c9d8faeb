# Sourced by the tch scripts: makes or reuses a virtualenv holding libtorch 2.13.0 from PyPI
# (CPU is enough; the wheel also carries the CUDA libraries' loaders) and exports what a
# `--features tch` build and run need. Override the location with TCH_VENV.
#   source scripts/libtorch-env.sh
TCH_VENV=${TCH_VENV:-"$PWD/.venv-libtorch"}
if ! "$TCH_VENV/bin/python" -c 'import importlib.util as u; exit(0 if u.find_spec("torch") else 1)' 2>/dev/null; then
  python3 -m venv "$TCH_VENV"
  # --no-deps: libtorch's shared libraries are all we need; the two NVIDIA packages hold the
  # CUDA runtime and CUPTI libraries that libtorch_cpu.so is linked against.
  "$TCH_VENV/bin/pip" install -q --no-deps torch==2.13.0 \
    nvidia-cuda-runtime==13.0.96 nvidia-cuda-cupti==13.0.85
fi
TCH_SITE=$("$TCH_VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
export LIBTORCH="$TCH_SITE/torch"
# tch checks the libtorch version only when it can read it; with LIBTORCH pointing into a
# wheel it cannot, so skip its check and check the version ourselves.
export LIBTORCH_BYPASS_VERSION_CHECK=1
libtorch_version=$(sed -n "s/^__version__ = '\([^']*\)'.*/\1/p" "$LIBTORCH/version.py")
case "$libtorch_version" in
  2.13.0*) ;;
  *) echo "libtorch-env: need libtorch 2.13.0, found '$libtorch_version' in $LIBTORCH" >&2; return 1 ;;
esac
nvidia_libs=$(find "$TCH_SITE/nvidia" -maxdepth 3 -type d -name lib 2>/dev/null | tr '\n' ':')
export LD_LIBRARY_PATH="$LIBTORCH/lib:${nvidia_libs}${LD_LIBRARY_PATH:-}"
echo "libtorch $libtorch_version from $LIBTORCH"

# The packages of every tch build (scripts/test-tch.sh's tests and its platform probe, perf's
# benchmarks against libtorch): the workspace without the chapters whose manifest says
# `libtorch = false`, each for the reason its chapter.toml gives. cargo resolves a crate's
# features over the packages a command selects, so commands that select other packages
# build shared, tch and the chapters again (the probe alone once cost a second build of
# tch); with this one selection they build them once. attention-perf is selected by the
# benchmarks and left out of the tests (it adds no feature to anything the tests build).
source "$(dirname "${BASH_SOURCE[0]}")/chapters.sh"
tch_selection=(--workspace)
for tch_chapter in $(chapters_where libtorch false); do tch_selection+=(--exclude "$tch_chapter"); done
unset tch_chapter
