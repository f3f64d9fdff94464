#!/bin/sh
# What tests/test_pyodide.py needs to run labkit on Pyodide under Node.js, offline once fetched,
# cached outside the repository ($LABKIT_PYODIDE_CACHE, default ~/.cache/labkit-pyodide):
#   - the `pyodide` npm package (CPython 3.14 compiled to WebAssembly, with its standard library);
#   - labkit's dependencies as wheels for that platform: pydantic (the version this venv has),
#     pydantic-core's Pyodide build, and the pure-Python rest;
#   - for the JupyterLite edition (`make lite`, scripts/build_lite.py), the kernel's own pure-Python wheels
#     (IPython, micropip, comm, ipywidgets...), pinned with their hashes in lite/browser-wheels.txt.
# Usage: scripts/pyodide_setup.sh [PYTHON]   (PYTHON: the venv's python; default .venv/bin/python)
set -eu
PYODIDE_VERSION=314.0.8        # Python 3.14; its wheels are tagged pyemscripten_2026_0_wasm32
PLATFORM=pyemscripten_2026_0_wasm32
PYTHON=${1:-.venv/bin/python}
CACHE=${LABKIT_PYODIDE_CACHE:-$HOME/.cache/labkit-pyodide}
mkdir -p "$CACHE/wheels" "$CACHE/lite-wheels"
if [ ! -f "$CACHE/node_modules/pyodide/pyodide.mjs" ] || ! grep -q "\"version\": \"$PYODIDE_VERSION\"" "$CACHE/node_modules/pyodide/package.json"; then
    npm install --silent --no-audit --no-fund --prefix "$CACHE" "pyodide@$PYODIDE_VERSION"
fi
PYDANTIC=$("$PYTHON" -c 'import importlib.metadata as m; print(m.version("pydantic"))')
rm -f "$CACHE"/wheels/*.whl
"$PYTHON" -m pip download --quiet --only-binary=:all: --platform "$PLATFORM" --python-version 3.14 \
    --implementation cp --abi cp314 -d "$CACHE/wheels" "pydantic==$PYDANTIC"
rm -f "$CACHE"/lite-wheels/*.whl
"$PYTHON" -m pip download --quiet --no-deps --only-binary=:all: --platform "$PLATFORM" --platform any --python-version 3.14 \
    --implementation cp --abi cp314 --abi none --require-hashes -d "$CACHE/lite-wheels" -r "$(dirname "$0")/../lite/browser-wheels.txt"
echo "Pyodide $PYODIDE_VERSION and $(ls "$CACHE/wheels" "$CACHE/lite-wheels" | grep -c whl) wheels in $CACHE"
