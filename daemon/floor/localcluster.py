"""A throwaway three-node JetStream cluster on loopback, from Debian's nats-server.

Used by the cluster's test (tests/shipper/test_cluster.py) and bench (bench/bench_cluster.py):
each node has its own config file, store and log in one temp folder, a client port and a route
port (free loopback ports chosen once, so a node started again takes the same ones), and is
stopped by its PID. `kill(name)` is a SIGKILL (a node lost as a power cut loses it); `start(name)`
brings it back on its store. The nodes' config is what docs/floor.md shows for the floor's three
servers, with `extra` (the accounts `tabled floor broker-config` writes) in each.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from daemon.floor.brokerconf import Identity, TableAccess, accounts_config
from daemon.floor.localservers import NATS_SERVER, ServerError, free_port
from daemon.shipper.nkey import make_seed

CLUSTER_NAME = "floor"
META_LEADER = re.compile(rb"(new metadata leader|Self is new JetStream cluster metadata leader)")


@dataclass
class Node:
    name: str
    folder: Path
    port: int = field(default_factory=free_port)
    route_port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    @property
    def config(self) -> Path:
        return self.folder / f"{self.name}.conf"

    @property
    def log(self) -> Path:
        return self.folder / f"{self.name}.log"

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


class NatsCluster:
    """`size` nats-server nodes routed to each other as one JetStream cluster."""

    def __init__(self, size: int = 3, base: Path | None = None, extra: str = "") -> None:
        self.root = Path(tempfile.mkdtemp(prefix="tabled-nats-cluster-", dir=base))
        self.nodes = [Node(f"n{i + 1}", self.root) for i in range(size)]
        self.extra = extra

    @property
    def urls(self) -> list[str]:
        return [node.url for node in self.nodes]

    def node(self, name: str) -> Node:
        for node in self.nodes:
            if node.name == name:
                return node
        raise KeyError(name)

    def _write_config(self, node: Node) -> None:
        routes = ", ".join(f"nats://127.0.0.1:{n.route_port}" for n in self.nodes)
        node.config.write_text(
            f"server_name: {node.name}\n"
            f"listen: 127.0.0.1:{node.port}\n"
            f'jetstream {{ store_dir: "{self.root / node.name}" }}\n'
            f"cluster {{\n  name: {CLUSTER_NAME}\n  listen: 127.0.0.1:{node.route_port}\n"
            f"  routes: [ {routes} ]\n}}\n" + self.extra
        )

    def start(self, name: str | None = None, wait: float = 30.0) -> NatsCluster:
        """Every node (or the one named), each until it says it is ready; with every node, until
        the cluster has a metadata leader."""
        for node in self.nodes if name is None else [self.node(name)]:
            self._start(node)
        if name is None:
            self.wait_meta_leader(wait)
        return self

    def _start(self, node: Node) -> None:
        if node.running:
            return
        self._write_config(node)
        log = node.log.open("ab")
        node.proc = subprocess.Popen(  # noqa: S603 - our own arguments, Debian's binary
            [str(NATS_SERVER), "-c", str(node.config)],
            stdout=log, stderr=subprocess.PIPE, start_new_session=True,
        )  # fmt: skip
        stream = node.proc.stderr
        if stream is None:
            raise ServerError("nats-server: no stderr pipe")
        seen = []
        for raw in stream:
            seen.append(raw.decode(errors="replace"))
            log.write(raw)
            if b"Server is ready" in raw:
                break
        else:
            node.proc.wait()
            log.close()
            raise ServerError(f"nats-server {node.name} did not start:\n" + "".join(seen[-20:]))

        def drain() -> None:  # its log, so it never blocks on a full pipe
            for chunk in stream:
                log.write(chunk)
                log.flush()
            log.close()

        threading.Thread(target=drain, daemon=True).start()

    def wait_meta_leader(self, timeout: float) -> None:
        """Until every running node's log names a JetStream metadata leader."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if all(META_LEADER.search(n.log.read_bytes()) for n in self.nodes if n.running):
                return
            time.sleep(0.1)
        raise ServerError(f"the cluster elected no metadata leader in {timeout:g} s")

    def kill(self, name: str) -> None:
        """SIGKILL one node by its PID (no goodbye to its routes or clients)."""
        node = self.node(name)
        if node.proc is not None and node.proc.poll() is None:
            os.kill(node.proc.pid, signal.SIGKILL)
            node.proc.wait(timeout=30)
        node.proc = None

    def stop(self) -> None:
        for node in self.nodes:
            if node.proc is not None and node.proc.poll() is None:
                os.kill(node.proc.pid, signal.SIGTERM)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    node.proc.wait(timeout=30)
                if node.proc.poll() is None:
                    os.kill(node.proc.pid, signal.SIGKILL)
                    node.proc.wait(timeout=30)
            node.proc = None

    def destroy(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)


def cluster_accounts(
    tables: Sequence[tuple[str, Path]], floor_seed: Path, reader: tuple[str, str]
) -> str:
    """The accounts `tabled floor broker-config` writes for these tables and the floor, each
    with an nkey made at its seed's path (0600), and one user more, `reader` (name, password):
    the test's or bench's own reader of the stream (its leader, every message), which no table
    or floor identity may be."""
    access = [
        TableAccess(table, Identity(nkey=make_seed(seed, "creds")[0])) for table, seed in tables
    ]
    floor = Identity(nkey=make_seed(floor_seed, "creds")[0])
    name, password = reader
    return accounts_config(access, floor).replace(
        "    users: [\n",
        f"    users: [\n      {{ user: {name}, password: {json.dumps(password)} }}\n",
        1,
    )


async def stream_leader(nc: Any, stream: str, timeout: float = 60.0) -> tuple[str, bool]:
    """The stream's leader, asked every 50 ms (each ask waits a quarter second) until it has
    one, and whether both other replicas are current."""
    js = nc.jetstream(timeout=0.25)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            info = await js.stream_info(stream)
        except Exception:
            await asyncio.sleep(0.05)
            continue
        cluster = info.cluster
        if cluster is not None and cluster.leader:
            replicas = cluster.replicas or []
            current = len(replicas) == 2 and all(p.current and not p.offline for p in replicas)
            return cluster.leader, current
        await asyncio.sleep(0.05)
    raise ServerError(f"stream {stream} has no leader after {timeout:g} s")


async def stored_line_ids(nc: Any, stream: str, prefix: str = "tabled") -> Counter[str]:
    """Every line's `Nats-Msg-Id` in the stream (`T01:123`; heads and conflict lines apart),
    counted: one of them above 1 is a line stored twice."""
    js = nc.jetstream(timeout=10.0)
    last = (await js.stream_info(stream)).state.last_seq
    counts: Counter[str] = Counter()
    sub = await js.subscribe(f"{prefix}.>", stream=stream, ordered_consumer=True)
    try:
        while last:
            msg = await sub.next_msg(timeout=30.0)
            msg_id = (msg.headers or {}).get("Nats-Msg-Id", "")
            if msg_id.count(":") == 1:
                counts[msg_id] += 1
            if msg.metadata.sequence.stream >= last:
                break
    finally:
        await sub.unsubscribe()
    return counts
