"""The flat module paths labkit had before its subpackages, kept working.

labkit's modules used to sit side by side (``labkit.scope``,
``labkit.charts``, ``labkit.capstone.guard``...). They now live in
``core/``, ``transports/``, ``loops/`` and ``teaching/``, so the tree shows
what to read first. A learner's saved notebook still says
``import labkit.scope`` or ``from labkit.charts import counters_chart``:
every old path must keep importing, and give the *same* module object as
the new path, so that monkeypatching either one patches the module the code
uses.

Two mechanisms, because of two constraints:

* The light modules are already imported by ``import labkit``:
  :func:`install` registers them in ``sys.modules`` under their old names
  too. This must happen during ``import labkit``, before any old-path
  import: the import system sets ``labkit.<child> = module`` when it first
  *loads* ``labkit.<child>``, and ``labkit.signature`` is a public function
  that a module must not replace. A name already in ``sys.modules`` is not
  loaded again, so nothing is set.
* The heavy modules (pandas, matplotlib, ipywidgets, OpenTelemetry, the live
  transport's client...) must stay unimported until used. A meta-path finder
  (:class:`_OldPathFinder`) answers only for the old names of modules that
  exist under their new names: its loader imports the module under its new
  name and hands that same object back (``create_module``), so the old name
  becomes a second key for one module. ``python -m`` with an old name is
  refused with the new name to run instead (:meth:`_SameModule.get_code`).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import ModuleType

MOVED: dict[str, str] = {
    # core: the lesson in code
    "limits": "core.limits",
    "events": "core.events",
    "signature": "core.signature",
    "scope": "core.scope",
    "bodies": "core.bodies",
    "errors": "core.errors",
    "_frozen": "core._frozen",
    "_sync": "core._sync",
    "_workers": "core._workers",
    # transports
    "chat": "transports.chat",
    "scripted": "transports.scripted",
    "live": "transports.live",
    # loops and the outcome
    "agents": "loops.agents",
    "runner": "loops.runner",
    "outcome": "loops.outcome",
    "scenarios": "loops.scenarios",
    "review": "loops.review",
    "telemetry": "loops.telemetry",
    # teaching helpers
    "frames": "teaching.frames",
    "charts": "teaching.charts",
    "widgets": "teaching.widgets",
    "predict": "teaching.predict",
    "spans": "teaching.spans",
    "direct": "teaching.direct",
    "capstone": "teaching.capstone",
}
"""Old module name under ``labkit`` -> its path under ``labkit`` now. A
package's submodules follow it (``labkit.capstone.guard`` ->
``labkit.teaching.capstone.guard``)."""

_PACKAGE = __name__.rpartition(".")[0]  # "labkit"


def new_name(old: str) -> str | None:
    """The module's full name now, for a full old name (``"labkit.scope"``); ``None`` if it did not move."""
    prefix = _PACKAGE + "."
    if not old.startswith(prefix):
        return None
    head, dot, tail = old[len(prefix) :].partition(".")
    moved = MOVED.get(head)
    if moved is None:
        return None
    return f"{prefix}{moved}{dot}{tail}"


class _SameModule(importlib.abc.Loader):
    """Loads an old name as the module already known (or now imported) under its new name."""

    def __init__(self, new: str) -> None:
        self.new = new
        self.spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.new)
        self.spec = module.__spec__  # the import system overwrites it after this call
        return module

    def exec_module(self, module: ModuleType) -> None:
        module.__spec__ = self.spec  # already executed under its new name: only restore its own spec

    def get_code(self, fullname: str) -> None:
        """What ``python -m <old path>`` asks for: refused with one line naming the path to run instead.

        Run under its old name, the module's relative imports would resolve
        against the wrong package; ``runpy`` prints this ``ImportError`` as one line.
        """
        raise ImportError(f"{fullname} is {self.new} now: python -m {self.new}", name=fullname)


class _OldPathFinder(importlib.abc.MetaPathFinder):
    """Finds labkit's old flat module paths; every other name goes to the usual finders."""

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        new = new_name(fullname)
        if new is None:
            return None
        if importlib.util.find_spec(new) is None:  # no such module now either: the usual "No module named <old>"
            return None
        return importlib.machinery.ModuleSpec(fullname, _SameModule(new))


def install() -> None:
    """Register the loaded modules under their old names and put the finder first (idempotent).

    First in ``sys.meta_path``: ``labkit.capstone.guard`` must not be found
    by the path finder in the moved package's folder and loaded a second time.
    Exactly one finder stays, also after ``importlib.reload`` of this module or
    of ``labkit`` (a reload makes a new finder class: the old one is taken out).
    """
    for old, new in MOVED.items():
        module = sys.modules.get(f"{_PACKAGE}.{new}")
        if module is not None:
            sys.modules[f"{_PACKAGE}.{old}"] = module
    sys.meta_path[:] = [finder for finder in sys.meta_path if not _is_old_path_finder(finder)]
    sys.meta_path.insert(0, _OldPathFinder())


def _is_old_path_finder(finder: object) -> bool:
    """A finder of this module, made by this load of it or by an earlier one (before a reload)."""
    kind = type(finder)
    return kind.__module__ == __name__ and kind.__qualname__ == _OldPathFinder.__qualname__
