"""Start `serve_fake.py` as a subprocess and wait for its port (no sleeping: it prints it)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SERVE = Path(__file__).parent / "serve_fake.py"


@contextmanager
def fake_server(tokens_file: Path) -> Iterator[str]:
    process = subprocess.Popen(
        [sys.executable, str(SERVE), str(tokens_file)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        if not line.startswith("PORT "):
            process.kill()
            _out, err = process.communicate(timeout=10)
            raise RuntimeError(f"fake server did not start: {line!r} {err}")
        yield f"http://127.0.0.1:{int(line.split()[1])}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
