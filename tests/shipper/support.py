"""A real nats-server with JetStream on a free loopback port, and readers of what it stored.

The server is Debian's `nats-server` (installed by .ci/run); each test gets its own in a temp
folder, started with `-js -a 127.0.0.1 -p PORT -sd DIR`, known ready when it logs "Server is
ready", and stopped by its PID.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

import nats
import nats.js.errors

from daemon.config import JournalConfig
from daemon.journal import Journal
from daemon.journal.format import journal_files, read_lines
from daemon.journal.provenance import TableKey, write_key
from daemon.shipper.config import FeedConfig
from daemon.shipper.tail import line_event, line_seq

NATS_SERVER = shutil.which("nats-server") or "/usr/sbin/nats-server"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class NatsServer:
    store: Path
    port: int = field(default_factory=free_port)
    args: tuple[str, ...] = ()
    proc: subprocess.Popen[bytes] | None = None
    log: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    def start(self) -> None:
        assert self.proc is None
        cmd = [NATS_SERVER, "-js", "-a", "127.0.0.1", "-p", str(self.port), "-sd", str(self.store)]
        self.proc = subprocess.Popen([*cmd, *self.args], stderr=subprocess.PIPE)
        assert self.proc.stderr is not None
        for raw in self.proc.stderr:
            line = raw.decode(errors="replace").rstrip()
            self.log.append(line)
            if "Server is ready" in line:
                break
        else:
            raise RuntimeError("nats-server did not start:\n" + "\n".join(self.log))
        stderr = self.proc.stderr
        threading.Thread(target=lambda: [None for _ in stderr], daemon=True).start()

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            os.kill(self.proc.pid, sig)
        self.proc.wait(10)
        self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()


def feed_config(server: NatsServer, **overrides: object) -> FeedConfig:
    values: dict[str, object] = {
        "servers": (server.url,),
        "ack_timeout_seconds": 2.0,
        "connect_timeout_seconds": 1.0,
        "backoff_max_seconds": 0.5,
        "drain_seconds": 5.0,
    }
    values.update(overrides)
    return FeedConfig(**values)


def make_journal(
    directory: Path, table: str, events: int, *, rotate_bytes: int = 64 * 1024 * 1024
) -> Journal:
    """An open journal of `table` with `events` more events (the daemon's own writer)."""
    config = JournalConfig(dir=directory, durability="none", rotate_bytes=rotate_bytes)
    journal = Journal.open(config, table)
    add_events(journal, events)
    return journal


def add_events(journal: Journal, events: int) -> None:
    for i in range(events):
        journal.append(
            "card.dealt" if i % 3 else "round.opened",
            actor="dealer",
            round_id=f"R{i // 10}",
            payload={"n": i, "card": "AS", "text": '牌 "quoted" ,"event":"x"'},
            commit=i % 50 == 49,
        )
    journal.flush()


def journal_lines(directory: Path) -> list[bytes]:
    """Every complete line of the journal, in order, byte for byte."""
    return [raw.data for f in journal_files(directory) for raw in read_lines(f) if raw.complete]


async def _stream_messages(url: str, stream: str) -> list[tuple[str, dict[str, str], bytes]]:
    nc = await nats.connect(url, allow_reconnect=False, error_cb=_quiet)
    try:
        js = nc.jetstream()
        info = await js.stream_info(stream)
        out: list[tuple[str, dict[str, str], bytes]] = []
        if not info.state.messages:
            return out
        sub = await js.subscribe(
            ">", stream=stream, ordered_consumer=True, pending_msgs_limit=1_000_000
        )
        while len(out) < info.state.messages:
            msg = await sub.next_msg(timeout=10)
            out.append((msg.subject, dict(msg.headers or {}), msg.data))
        await sub.unsubscribe()
        return out
    finally:
        await nc.close()


async def _quiet(exc: Exception) -> None:
    return None


def stream_messages(url: str, stream: str = "TABLED") -> list[tuple[str, dict[str, str], bytes]]:
    return asyncio.run(_stream_messages(url, stream))


def stream_lines(url: str, table: str, stream: str = "TABLED") -> list[bytes]:
    """The bodies the stream holds for `table`, in stream order, after checking each message's
    subject and id against its body."""
    out = []
    for subject, headers, data in stream_messages(url, stream):
        if not subject.startswith(f"tabled.{table}.") or subject == f"tabled.{table}.head":
            continue  # the table's signed heads are checked by the floor (tests/floor)
        seq = line_seq(data)
        assert headers.get("Nats-Msg-Id") == f"{table}:{seq}"
        assert subject == f"tabled.{table}.{line_event(data)}"
        out.append(data)
    return out


def assert_stream_is_journal(url: str, table: str, directory: Path) -> None:
    """The stream's lines of `table` are the journal's: all, once each, in order, exact bytes."""
    stored = stream_lines(url, table)
    expected = journal_lines(directory)
    seqs = [line_seq(x) for x in stored]
    assert len(seqs) == len(set(seqs)), "a line is in the stream twice"
    assert stored == expected


REPO = Path(__file__).resolve().parents[2]
TABLED = [sys.executable, "-m", "daemon"]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}
DEVICES = ("shuffler", "dice_shaker", "shoe_reader", "timer_bell")


def write_table_config(
    path: Path,
    journal: Path,
    table: str = "T09",
    feed: dict[str, object] | None = None,
    tokens: Path | None = None,
) -> Path:
    """A Thirteen table on simulated devices; `feed` is its [feed] section (None: none)."""
    lines = [
        "[table]", f'id = "{table}"', 'game = "thirteen"',
        "[journal]", f"dir = {json.dumps(str(journal))}", 'durability = "none"',
    ]  # fmt: skip
    if feed is not None:
        # A table with a [feed] signs its chain's heads: its key beside the config.
        key = path.parent / f"{table}.key"
        if not key.exists():
            write_key(key, TableKey.generate())
        lines.insert(3, f"key_file = {json.dumps(str(key))}")
        lines.append("[feed]")
        lines += [f"{key} = {json.dumps(value)}" for key, value in feed.items()]
    if tokens is not None:
        lines += ["[api]", f"tokens_file = {json.dumps(str(tokens))}"]
    for i, name in enumerate(DEVICES):
        lines += [f"[devices.{name}]", f'port = "sim://{name}?seed={7 + i}&speed=0"']
    path.write_text("\n".join(lines) + "\n")
    return path


def tabled(
    *args: str, timeout: float = 120, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*TABLED, *args], check=False, capture_output=True, text=True, timeout=timeout,
        env={**ENV, **(env or {})},
    )  # fmt: skip
