"""Throwaway local servers from Debian's binaries: a PostgreSQL cluster and a nats-server.

Used by the floor's tests, its benchmark and `tabled floor demo`. Each server lives in a temp
folder of its own, listens on a free loopback port and is stopped by its PID. PostgreSQL refuses
to run as root, so when we are root the cluster is made and run as the `postgres` system user:
the child drops to it itself (`subprocess`'s user/group), so no `runuser` or `su` has to be on
the PATH (a root shell's PATH often lacks /usr/sbin).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import select
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Any

import psycopg

PG_BIN = Path(os.environ.get("TABLED_PG_BIN", "/usr/lib/postgresql/15/bin"))
NATS_SERVER = Path(os.environ.get("TABLED_NATS_SERVER", "/usr/sbin/nats-server"))


class ServerError(RuntimeError):
    """A local server could not be started; the message says what it printed."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _closed_to(folder: Path, uid: int, gid: int) -> Path | None:
    """The first folder on the way to `folder` that the user `uid` may not enter, if any."""
    for where in reversed([folder.resolve(), *folder.resolve().parents]):
        st = where.stat()
        if st.st_uid == uid:
            allowed = st.st_mode & stat.S_IXUSR
        elif st.st_gid == gid:
            allowed = st.st_mode & stat.S_IXGRP
        else:
            allowed = st.st_mode & stat.S_IXOTH
        if not allowed:
            return where
    return None


def _wait_pid(pid: int) -> None:
    """Wait for a process we did not spawn (the postmaster) to be gone."""
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)
    # Not our child: pidfd_open lets us block on it until it exits.
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        select.select([fd], [], [], 30.0)
    finally:
        os.close(fd)


class PostgresCluster:
    """`initdb` into a temp folder, `pg_ctl start` on a free port with its own socket folder."""

    def __init__(self, base: Path | None = None, user: str = "floor") -> None:
        self.root = Path(tempfile.mkdtemp(prefix="tabled-pg-", dir=base))
        self.data = self.root / "data"
        self.sockets = self.root / "sock"
        self.sockets.mkdir()
        self.port = free_port()
        self.user = user
        self._as: dict[str, Any] = {}
        if os.geteuid() == 0:
            try:
                pg = pwd.getpwnam("postgres")
            except KeyError:
                shutil.rmtree(self.root, ignore_errors=True)
                raise ServerError(
                    "PostgreSQL does not run as root and there is no `postgres` user to run it "
                    "as (install postgresql, or run this as another user)"
                ) from None
            blocked = _closed_to(self.root.parent, pg.pw_uid, pg.pw_gid)
            if blocked is not None:
                shutil.rmtree(self.root, ignore_errors=True)
                raise ServerError(
                    f"PostgreSQL runs as `postgres`, which may not enter {blocked} (mode "
                    f"{stat.filemode(blocked.stat().st_mode)}); set TMPDIR to a folder it can "
                    "reach, e.g. TMPDIR=/tmp"
                )
            os.chown(self.root, pg.pw_uid, pg.pw_gid)
            os.chown(self.sockets, pg.pw_uid, pg.pw_gid)
            # Its own folder as the working directory: root's may be closed to it.
            self._as = {
                "user": pg.pw_uid, "group": pg.pw_gid, "extra_groups": [], "cwd": self.root,
                "env": {**os.environ, "HOME": pg.pw_dir, "USER": "postgres", "LOGNAME": "postgres"},
            }  # fmt: skip

    def _run(self, *args: str) -> None:
        proc = subprocess.run(  # noqa: S603 - our own arguments, Debian's binaries
            args, capture_output=True, text=True, check=False, timeout=120, **self._as
        )
        if proc.returncode != 0:
            raise ServerError(f"{Path(args[0]).name} failed: {proc.stdout}{proc.stderr}")

    def init(self) -> PostgresCluster:
        self._run(
            str(PG_BIN / "initdb"), "-D", str(self.data), "-U", self.user, "-A", "trust",
            "-N", "-E", "UTF8", "--no-instructions",
        )  # fmt: skip
        return self

    def start(self) -> PostgresCluster:
        self._run(
            str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-l", str(self.root / "log"), "-w",
            "-o", f"-p {self.port} -k {self.sockets} -c listen_addresses=127.0.0.1 "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off",
            "start",
        )  # fmt: skip
        return self

    @property
    def pid(self) -> int | None:
        try:
            return int((self.data / "postmaster.pid").read_text().split("\n", 1)[0])
        except (FileNotFoundError, ValueError):
            return None

    def stop(self, how: signal.Signals = signal.SIGINT) -> None:
        """Stop by PID (SIGINT: PostgreSQL's fast shutdown)."""
        pid = self.pid
        if pid is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, how)
            _wait_pid(pid)

    def dsn(self, database: str = "postgres") -> str:
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        with psycopg.connect(self.dsn(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"'.encode())
        return self.dsn(name)

    def destroy(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)


class NatsServer:
    """`nats-server -js` on a free loopback port with its store in a temp folder."""

    def __init__(self, base: Path | None = None) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="tabled-nats-", dir=base))
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    def start(self) -> NatsServer:
        log = (self.root / "log").open("ab")
        self.proc = subprocess.Popen(  # noqa: S603 - our own arguments, Debian's binary
            [str(NATS_SERVER), "-js", "-a", "127.0.0.1", "-p", str(self.port), "-sd",
             str(self.root / "store")],
            stdout=log, stderr=subprocess.PIPE, start_new_session=True,
        )  # fmt: skip
        stream = self.proc.stderr
        if stream is None:
            raise ServerError("nats-server: no stderr pipe")
        seen = []
        for raw in stream:
            line = raw.decode(errors="replace")
            seen.append(line)
            log.write(raw)
            if "Server is ready" in line:
                break
        else:
            self.proc.wait()
            raise ServerError("nats-server did not start:\n" + "".join(seen[-20:]))
        # Keep draining its log so it never blocks on a full pipe.

        def drain() -> None:
            for chunk in stream:
                log.write(chunk)
            log.close()

        threading.Thread(target=drain, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=30)
        self.proc = None

    def destroy(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)
