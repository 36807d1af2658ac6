"""Where the running daemon's API is: the address `tabled run --http` writes into its journal
folder, so that `tabled status`, `act` and `journal` find the daemon however it was started
(`--http 127.0.0.1:0`, a port other than the config's) before falling back to `[api] listen`.

The file is `<journal dir>/api.json`, `{"url": ..., "pid": ...}`, written when the API listens
and removed when the daemon stops. A file left by a daemon that died (its pid is gone) is
ignored. The journal folder is the table's own (one daemon holds its lock at a time), so the
file names one daemon, never another table's.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from daemon.config import load_config, parse_listen

ADDRESS_FILE = "api.json"


def publish(directory: Path, url: str) -> Path | None:
    """Write the API's address for the client commands; None if the folder is not writable
    (the daemon serves anyway: the clients then use the config's `[api] listen`)."""
    path = directory / ADDRESS_FILE
    partial = path.with_suffix(".json.partial")
    try:
        partial.write_text(json.dumps({"url": url, "pid": os.getpid()}) + "\n", encoding="utf-8")
        partial.replace(path)  # whole or not at all, for a client reading meanwhile
    except OSError:
        return None
    return path


def withdraw(path: Path | None) -> None:
    """Remove the address when the daemon stops (if it is still ours)."""
    if path is None:
        return
    with contextlib.suppress(OSError, ValueError):
        if json.loads(path.read_text(encoding="utf-8")).get("pid") == os.getpid():
            path.unlink()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process: it exists
    return True


def running_url(directory: Path) -> str | None:
    """The URL of the daemon running on this journal folder, if one published it and lives."""
    try:
        data = json.loads((directory / ADDRESS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    url, pid = data.get("url"), data.get("pid")
    if not isinstance(url, str) or not isinstance(pid, int) or not _alive(pid):
        return None
    return url


def find_url(config: Path | None, journal: Path | None = None) -> tuple[str, str]:
    """(URL, where it came from) of the table the client commands talk to, when no `--url` or
    `$TABLED_URL` says: the running daemon's published address, else the config's `[api] listen`.
    ConfigError when the config cannot be read."""
    loaded = load_config(config)
    folder = journal if journal is not None else loaded.journal.dir
    url = running_url(folder)
    if url is not None:
        return url, f"the running daemon's address in {folder / ADDRESS_FILE}"
    host, port = parse_listen(loaded.api.listen)
    host = "127.0.0.1" if host in ("0.0.0.0", "") else host  # noqa: S104 - mapping, not binding
    scheme = "https" if loaded.api.tls_cert is not None else "http"
    return (
        f"{scheme}://{'[' + host + ']' if ':' in host else host}:{port}",
        "the config's [api] listen; no running daemon published its address in "
        f"{folder / ADDRESS_FILE}",
    )
