"""labkit's version, in one place: read by ``labkit/__init__.py``, the console, telemetry and the build (hatch)."""

__version__ = "0.1.0"
