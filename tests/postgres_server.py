"""A real PostgreSQL server for the durable store's tests: a temporary cluster on loopback, stopped after.

:func:`running_postgres` runs ``initdb`` in a new temporary folder, starts
``postgres`` listening on 127.0.0.1 only (a free port, its unix socket inside
that folder, password-less ``trust`` for that loopback only), yields a
``postgresql://`` URL, then stops the server (``pg_ctl stop -m immediate``)
and removes the folder. PostgreSQL refuses to run as root: as root, the
cluster runs as the ``postgres`` system user (Debian's package creates it)
through ``runuser``. :func:`unavailable` says why it cannot run here, or ``None``.

``fsync=off``: the tests kill clients, never the server or the machine, so
flushing to disk buys nothing here but minutes.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def _bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return candidates[-1] if candidates else None


def _run_as() -> list[str]:
    """The command prefix that runs the server's tools as a user PostgreSQL accepts."""
    if os.geteuid() != 0:
        return []
    return [shutil.which("runuser") or "runuser", "-u", "postgres", "--"]


def unavailable() -> str | None:
    """Why no PostgreSQL server can be started here, or ``None`` when it can."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install -e '.[postgres]')"
    for tool in ("initdb", "pg_ctl"):
        if _bin(tool) is None:
            return f"PostgreSQL's {tool} is not installed (Debian: apt-get install postgresql)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no 'postgres' user to run the server as"
        if shutil.which("runuser") is None:
            return "running as root and runuser is missing"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def running_postgres() -> Iterator[str]:
    """Start a throw-away cluster; yield its URL (database ``postgres``, user ``labkit``)."""
    folder = Path(tempfile.mkdtemp(prefix="labkit-pg-"))
    prefix = _run_as()
    if prefix:
        entry = pwd.getpwnam("postgres")
        os.chown(folder, entry.pw_uid, entry.pw_gid)
    data, log = folder / "data", folder / "server.log"
    port = _free_port()
    started = False
    try:
        subprocess.run(
            [*prefix, _bin("initdb"), "-D", str(data), "-U", "labkit", "-A", "trust", "-E", "UTF8", "--no-sync"],
            check=True,
            capture_output=True,
            text=True,
        )
        options = (
            f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={folder} "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=60"
        )
        subprocess.run(
            [*prefix, _bin("pg_ctl"), "-D", str(data), "-l", str(log), "-o", options, "-w", "-t", "60", "start"],
            check=True,
            capture_output=True,
            text=True,
        )
        started = True
        yield f"postgresql://labkit@127.0.0.1:{port}/postgres"
    except subprocess.CalledProcessError as exc:
        shown = log.read_text() if log.exists() else ""
        raise RuntimeError(f"PostgreSQL did not start: {exc.stderr or exc.stdout}{shown[-2000:]}") from None
    finally:
        if started:
            subprocess.run(
                [*prefix, _bin("pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
                check=False,
                capture_output=True,
            )
        shutil.rmtree(folder, ignore_errors=True)


def fresh_database(url: str, name: str) -> str:
    """Create the empty database ``name`` on the server at ``url``; return its URL."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
        admin.execute(f'CREATE DATABASE "{name}"')
    return url.rsplit("/", 1)[0] + "/" + name
