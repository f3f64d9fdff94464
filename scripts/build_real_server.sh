#!/usr/bin/env bash
# Build two real OpenAI-compatible servers for the integration tests (tests/test_real_server.py):
#   - llama.cpp's own C++ server, `llama-server`, from the llama.cpp sources vendored in the
#     llama-cpp-python source distribution;
#   - llama-cpp-python's Python server (`python -m llama_cpp.server`) in its own virtual
#     environment, loading the libllama built above (no second C++ build).
# The build lives outside the repository, keyed by version, and is reused when complete:
#   ${LABKIT_REAL_SERVER_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/labkit-real-server}/<version>/
# Needs cmake, ninja and a C++ compiler (Debian: cmake ninja-build build-essential).
# Takes 10 to 30 minutes on 2 cores (measured: 29 min with other builds competing for the CPU);
# the tests skip themselves until it has been run.
set -euo pipefail

VERSION="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
PYTHON="${PYTHON:-python3}"
ROOT="${LABKIT_REAL_SERVER_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/labkit-real-server}"
DIR="$ROOT/$VERSION"
JOBS="${JOBS:-2}"

if [ -f "$DIR/READY" ]; then
    echo "real servers already built in $DIR"
    exit 0
fi

for tool in cmake ninja c++; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "missing '$tool': install cmake, ninja-build and build-essential first" >&2
        exit 1
    fi
done

mkdir -p "$DIR"
cd "$DIR"
start=$(date +%s)

# 1. The source distribution (it vendors llama.cpp itself).
if [ ! -d src ]; then
    rm -rf download && mkdir download
    "$PYTHON" -m pip download --quiet --no-deps \
        "llama-cpp-python==$VERSION" -d download
    mkdir src.tmp
    tar -xzf download/llama_cpp_python-"$VERSION".tar.gz -C src.tmp --strip-components=1
    mv src.tmp src
fi

# 2. llama-server and the shared libraries it needs. LLAMA_USE_PREBUILT_UI=OFF: the configure step
#    otherwise tries to download a prebuilt web UI (which fails offline, harmlessly but noisily);
#    the tests talk to the API only.
cmake -S src/vendor/llama.cpp -B build -G Ninja \
    -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=ON -DLLAMA_USE_PREBUILT_UI=OFF
cmake --build build --target llama-server llama ggml -j"$JOBS"
test -x build/bin/llama-server
lib_dir="$(dirname "$(find build -name 'libllama.so' | head -1)")"
echo "llama-server built after $(( $(date +%s) - start )) s"

# 3. llama-cpp-python's server in its own venv, loading the libllama built above; the `gguf`
#    package there writes the tests' tiny model (tests/tiny_gguf.py).
if [ ! -f venv/.installed ]; then
    rm -rf venv
    "$PYTHON" -m venv venv
    CMAKE_ARGS="-DLLAMA_BUILD=OFF -DLLAVA_BUILD=OFF" \
        venv/bin/python -m pip install --quiet "./src[server]" gguf
    touch venv/.installed
fi
LLAMA_CPP_LIB_PATH="$DIR/$lib_dir" venv/bin/python -c "import llama_cpp.server.app, gguf"
echo "llama-cpp-python's server installed after $(( $(date +%s) - start )) s"

# 4. Record where things are for the tests.
cat > READY <<INFO
llama_server=$DIR/build/bin/llama-server
lib_dir=$DIR/$lib_dir
python=$DIR/venv/bin/python
templates=$DIR/src/vendor/llama.cpp/models/templates
INFO
echo "real servers built in $DIR after $(( $(date +%s) - start )) s"
