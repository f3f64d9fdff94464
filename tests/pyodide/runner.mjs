// Run labkit under Pyodide in Node.js (tests/test_pyodide.py starts it):
//   node --experimental-wasm-stack-switching runner.mjs PYODIDE_DIR WHEELS_DIR SCRIPT.py
// Installs every wheel of WHEELS_DIR offline (labkit's own and its dependencies, Pyodide builds
// where compiled), runs SCRIPT.py, calls its `main_sync()` through a promising call (so that
// pyodide.ffi.run_sync, labkit's sync entry here, may suspend), then awaits its `main_async()`,
// and prints what each returns, one line each. Exits when done: a run's cancelled timers would
// otherwise keep Node waiting for them.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [pyodideDir, wheelsDir, script] = process.argv.slice(2);
const { loadPyodide } = await import(pathToFileURL(join(pyodideDir, "pyodide.mjs")).href);
const py = await loadPyodide({ indexURL: pyodideDir + "/", packages: [] });
for (const name of readdirSync(wheelsDir).filter((n) => n.endsWith(".whl"))) {
  py.unpackArchive(new Uint8Array(readFileSync(join(wheelsDir, name))), "wheel");
}
py.runPython(readFileSync(script, "utf8"));
console.log(await py.globals.get("main_sync").callPromising());
console.log(await py.runPythonAsync("await main_async()"));
process.exit(0);
