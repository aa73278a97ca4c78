"""A real PostgreSQL server for tests and benchmarks, started in a temporary folder.

No tests here. Two kinds of server, both real:

- ``"pgvector"``: the server inside the ``pgserver`` wheel (a dev dependency), which ships the
  pgvector extension;
- ``"plain"``: a server without pgvector, for the exact-search fallback: Debian's
  ``postgresql-NN`` (``/usr/lib/postgresql/NN/bin``) when installed, or ``$SKILLBANK_PG_PLAIN_BIN``.

Each listens on 127.0.0.1 (a free port) and on a Unix socket in its folder, with trust
authentication for the ``postgres`` role. PostgreSQL refuses to run as root: as root, the
server runs as the system user ``postgres`` (Debian's package creates it) via ``runuser``.
"""

from __future__ import annotations

import contextlib
import glob
import importlib.util
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

KINDS = ("pgvector", "plain")


class ServerUnavailable(RuntimeError):
    """This machine cannot start that kind of server (the message says what is missing)."""


def binaries(kind: str) -> Path:
    if kind == "pgvector":
        # Found, not imported: importing pgserver touches the user's runtime folders.
        spec = importlib.util.find_spec("pgserver")
        if spec is None or not spec.origin:
            raise ServerUnavailable("the pgserver package is not installed: pip install -e '.[dev]'")
        bindir = Path(spec.origin).parent / "pginstall" / "bin"
        if not (bindir / "postgres").exists():
            raise ServerUnavailable(f"pgserver has no server binaries at {bindir}")
        return bindir
    env = os.environ.get("SKILLBANK_PG_PLAIN_BIN")
    candidates = [env] if env else sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    for candidate in candidates:
        bindir = Path(candidate)
        share = bindir.parent.parent.parent.parent / "share" / "postgresql" / bindir.parent.name / "extension"
        if (bindir / "postgres").exists() and not (share / "vector.control").exists():
            return bindir
    raise ServerUnavailable("no PostgreSQL server without pgvector found (apt-get install postgresql-15, "
                            "or set SKILLBANK_PG_PLAIN_BIN to a server's bin folder)")


def _free_port() -> int:
    with contextlib.closing(socket.socket()) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalPostgres:
    """A throwaway server: :meth:`start`, :meth:`create_database`, :meth:`stop`."""

    def __init__(self, kind: str, *, fsync: bool = False, max_connections: int = 200):
        self.kind = kind
        self.bindir = binaries(kind)
        self.fsync = fsync
        self.max_connections = max_connections
        self.root = Path(tempfile.mkdtemp(prefix=f"skillbank-pg-{kind}-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self.user = None
        if os.geteuid() == 0:
            try:
                self.user = pwd.getpwnam("postgres")
            except KeyError:
                raise ServerUnavailable("running as root needs a 'postgres' system user to run the server") from None
            os.chown(self.root, self.user.pw_uid, self.user.pw_gid)
            self.bindir = self._reachable(self.bindir)
        self._databases = 0

    def _reachable(self, bindir: Path) -> Path:
        """``bindir``, or a copy of its installation the server's user can read (a venv inside a
        private folder is not)."""
        check = subprocess.run(["runuser", "-u", self.user.pw_name, "--", "test", "-x", str(bindir / "postgres")],
                               capture_output=True)
        if check.returncode == 0:
            return bindir
        # The copy keeps the wheel's layout: pgserver's binaries find their vendored libpq through
        # an RPATH relative to site-packages ($ORIGIN/../../../pgserver.libs), so that folder
        # comes along (a checkout in a private `mktemp -d` folder failed on it).
        source = bindir.parent  # .../site-packages/pgserver/pginstall
        site = source.parent.parent
        copy = self.root / "install"
        install = copy / source.relative_to(site)
        shutil.copytree(source, install, symlinks=True)
        for libs in site.glob(f"{source.parent.name}.libs"):
            shutil.copytree(libs, copy / libs.name, symlinks=True)
        for folder, _, files in os.walk(copy):
            os.chown(folder, self.user.pw_uid, self.user.pw_gid)
            for name in files:
                os.chown(os.path.join(folder, name), self.user.pw_uid, self.user.pw_gid, follow_symlinks=False)
        return install / "bin"

    def _run(self, *args: str, **kwargs) -> subprocess.CompletedProcess:
        cmd = [str(self.bindir / args[0]), *args[1:]]
        if self.user is not None:
            cmd = ["runuser", "-u", self.user.pw_name, "--", *cmd]
        return subprocess.run(cmd, capture_output=True, text=True, **kwargs)

    def start(self) -> "LocalPostgres":
        done = self._run("initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "-E", "UTF8",
                         "--no-sync", "--locale=C")
        if done.returncode:
            raise ServerUnavailable(f"initdb failed: {done.stderr.strip()[-500:]}")
        options = (f"-k {self.root} -p {self.port} -c listen_addresses=127.0.0.1 "
                   f"-c max_connections={self.max_connections} -c fsync={'on' if self.fsync else 'off'}")
        done = self._run("pg_ctl", "-D", str(self.data), "-l", str(self.root / "server.log"), "-w",
                         "-t", "60", "-o", options, "start")
        if done.returncode:
            log = (self.root / "server.log").read_text(errors="replace")[-800:] if (self.root / "server.log").exists() else ""
            raise ServerUnavailable(f"pg_ctl start failed: {done.stderr.strip()[-400:]} {log}")
        return self

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str | None = None) -> str:
        """A new empty database; returns its connection string."""
        import psycopg

        self._databases += 1
        name = name or f"bank_{os.getpid()}_{self._databases}_{int(time.time() * 1000) % 100000}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> "LocalPostgres":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
