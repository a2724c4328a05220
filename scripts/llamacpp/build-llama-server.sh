#!/usr/bin/env bash
# Builds llama.cpp's `llama-server` for CPU from the llama.cpp source that the npm package
# node-llama-cpp ships (as a git bundle, llama/gitRelease.bundle), and caches it outside the clone:
#   ${XDG_CACHE_HOME:-$HOME/.cache}/inferbench/llama-server-<node-llama-cpp version>/
#     bin/llama-server            the static binary
#     ggml-vocab-gpt-2.gguf       GPT-2 vocabulary, copied from the same tree (models/), for make-tiny-gguf
#     build-seconds               how long the build took on this machine
# Only the first run on a machine pays the build (~10+ minutes on 2 cores); later runs print the path.
#
# The package is fetched with `npm pack` (a tarball download: none of its install scripts, which fetch
# prebuilt binaries, are run).
#
# Prints the cache folder as the last line of stdout. Exit codes:
#   0  ready
#   3  the environment cannot build it (a tool missing, the npm registry unreachable, no disk space);
#      the llama.cpp test skips on this, with the message printed here
#   1  anything else (the build itself failed): a real failure
set -uo pipefail

NODE_LLAMA_CPP_VERSION="${NODE_LLAMA_CPP_VERSION:-3.22.1}"
CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/inferbench"
DEST="$CACHE_ROOT/llama-server-$NODE_LLAMA_CPP_VERSION"
JOBS="${LLAMACPP_BUILD_JOBS:-2}"

env_fail() { echo "llama-server build: environment: $*" >&2; exit 3; }
fail() { echo "llama-server build: $*" >&2; exit 1; }

ready() {
  [ -x "$DEST/bin/llama-server" ] && [ -f "$DEST/ggml-vocab-gpt-2.gguf" ] \
    && "$DEST/bin/llama-server" --version >/dev/null 2>&1
}

if ready; then echo "$DEST"; exit 0; fi

missing_tools() {
  local t
  for t in npm tar git cmake c++ make flock; do command -v "$t" >/dev/null 2>&1 || printf '%s ' "$t"; done
}
missing="$(missing_tools)"
if [ -n "$missing" ] && command -v apt-get >/dev/null 2>&1; then
  # A fresh machine: install the build tools from Debian's packages, as root or through `sudo -n`.
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo -n"
  if [ -z "$sudo" ] || sudo -n true 2>/dev/null; then
    echo "llama-server build: installing build tools (missing: $missing) with apt-get" >&2
    { $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        cmake g++ make git ca-certificates util-linux; } >&2 || true
    missing="$(missing_tools)"
  fi
fi
[ -z "$missing" ] || env_fail "missing tools: $missing(needed to build llama-server; apt-get install cmake g++ make git)"

mkdir -p "$CACHE_ROOT" || env_fail "cannot create $CACHE_ROOT"
# One build at a time per machine: a second caller waits for the first, then finds the binary ready.
exec 9>"$CACHE_ROOT/llama-server-$NODE_LLAMA_CPP_VERSION.lock"
flock 9 || env_fail "cannot lock $CACHE_ROOT"
if ready; then echo "$DEST"; exit 0; fi

free_kib=$(df -Pk "$CACHE_ROOT" | awk 'NR==2 {print $4}')
[ "${free_kib:-0}" -gt 2000000 ] || env_fail "less than 2 GB free under $CACHE_ROOT"

work="$(mktemp -d "$CACHE_ROOT/llama-build.XXXXXX")" || env_fail "cannot create a temp folder"
trap 'rm -rf "$work"' EXIT
log="$work/build.log"
started=$(date +%s)

echo "llama-server build: fetching node-llama-cpp@$NODE_LLAMA_CPP_VERSION (npm pack, no install scripts)" >&2
( cd "$work" && npm pack "node-llama-cpp@$NODE_LLAMA_CPP_VERSION" --loglevel=error --no-audit --no-fund >"$log" 2>&1 ) \
  || { tail -5 "$log" >&2; env_fail "npm pack node-llama-cpp@$NODE_LLAMA_CPP_VERSION failed (registry unreachable?)"; }
tar -xzf "$work/node-llama-cpp-$NODE_LLAMA_CPP_VERSION.tgz" -C "$work" package/llama/gitRelease.bundle \
  package/llama/llama.cpp.info.json || fail "the package has no llama/gitRelease.bundle: its layout changed"
git clone --quiet "$work/package/llama/gitRelease.bundle" "$work/llama.cpp" >>"$log" 2>&1 \
  || fail "cannot clone llama/gitRelease.bundle"
commit=$(git -C "$work/llama.cpp" rev-parse --short HEAD)
echo "llama-server build: llama.cpp $commit ($(tr -d '\n ' <"$work/package/llama/llama.cpp.info.json"))" >&2

# CPU only, static, server target only; every option that would download something is off
# (curl/openssl for model downloads, the prebuilt web UI).
echo "llama-server build: cmake configure + build (-j$JOBS); log: $log" >&2
cmake -S "$work/llama.cpp" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
  -DBUILD_SHARED_LIBS=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
  -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TOOLS=ON \
  -DGGML_METAL=OFF -DGGML_CUDA=OFF -DGGML_VULKAN=OFF >>"$log" 2>&1 \
  || { tail -30 "$log" >&2; fail "cmake configure failed"; }
cmake --build "$work/build" --config Release --target llama-server -j "$JOBS" >>"$log" 2>&1 \
  || { tail -40 "$log" >&2; fail "cmake build failed"; }

finished=$(date +%s)
staging="$DEST.partial"
rm -rf "$staging" && mkdir -p "$staging/bin"
cp "$work/build/bin/llama-server" "$staging/bin/" || fail "no build/bin/llama-server after the build"
cp "$work/llama.cpp/models/ggml-vocab-gpt-2.gguf" "$staging/" || fail "no models/ggml-vocab-gpt-2.gguf in the tree"
cp "$work/llama.cpp/LICENSE" "$staging/LICENSE.llama.cpp"
echo "$((finished - started))" >"$staging/build-seconds"
echo "$commit" >"$staging/llama-cpp-commit"
rm -rf "$DEST" && mv "$staging" "$DEST"
ready || fail "the built llama-server does not run: $DEST/bin/llama-server --version"
echo "llama-server build: done in $((finished - started)) s -> $DEST" >&2
echo "$DEST"
