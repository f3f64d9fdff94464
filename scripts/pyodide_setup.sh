#!/bin/sh
# What tests/test_pyodide.py needs to run labkit on Pyodide under Node.js, offline once fetched,
# cached outside the repository ($LABKIT_PYODIDE_CACHE, default ~/.cache/labkit-pyodide):
#   - the `pyodide` npm package (CPython 3.14 compiled to WebAssembly, with its standard library);
#   - labkit's dependencies as wheels for that platform: pydantic (the version this venv has),
#     pydantic-core's Pyodide build, and the pure-Python rest.
# Usage: scripts/pyodide_setup.sh [PYTHON]   (PYTHON: the venv's python; default .venv/bin/python)
set -eu
PYODIDE_VERSION=314.0.8        # Python 3.14; its wheels are tagged pyemscripten_2026_0_wasm32
PLATFORM=pyemscripten_2026_0_wasm32
PYTHON=${1:-.venv/bin/python}
CACHE=${LABKIT_PYODIDE_CACHE:-$HOME/.cache/labkit-pyodide}
mkdir -p "$CACHE/wheels"
if [ ! -f "$CACHE/node_modules/pyodide/pyodide.mjs" ] || ! grep -q "\"version\": \"$PYODIDE_VERSION\"" "$CACHE/node_modules/pyodide/package.json"; then
    npm install --silent --no-audit --no-fund --prefix "$CACHE" "pyodide@$PYODIDE_VERSION"
fi
PYDANTIC=$("$PYTHON" -c 'import importlib.metadata as m; print(m.version("pydantic"))')
rm -f "$CACHE"/wheels/*.whl
"$PYTHON" -m pip download --quiet --only-binary=:all: --platform "$PLATFORM" --python-version 3.14 \
    --implementation cp --abi cp314 -d "$CACHE/wheels" "pydantic==$PYDANTIC"
echo "Pyodide $PYODIDE_VERSION and $(ls "$CACHE/wheels" | wc -l) wheels in $CACHE"
