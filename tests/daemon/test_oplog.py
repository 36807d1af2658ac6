"""The operational log's format and its durability (daemon/logging.py).

The chain writes what structlog's own processors wrote (TimeStamper iso/utc, JSONRenderer,
PrintLogger) at less cost a line: the same keys in the same order, the same JSON text, an ISO
8601 UTC timestamp, structured tracebacks without locals, stdlib loggers in the same form. And
each line is out of the process as it is logged: a SIGKILL right after loses none.
"""

from __future__ import annotations

import io
import json
import logging
import re
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import structlog

from daemon.logging import _UtcTimestamp, configure_logging, get_logger
from tests.daemon.cli_support import REPO, environment

ISO_UTC = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")


@pytest.fixture(autouse=True)
def _restore_structlog() -> Iterator[None]:
    saved = structlog.get_config()
    root = logging.getLogger()
    level = root.level
    yield
    structlog.configure(**saved)
    root.setLevel(level)
    for handler in list(root.handlers):
        if getattr(handler, "_tabled", False):
            root.removeHandler(handler)
    logging.getLogger("transitions").setLevel(logging.NOTSET)


class Chip:
    """A value JSON has no form for, which says how it is logged."""

    def __structlog__(self) -> str:
        return "chip 500"


class Seat:
    def __repr__(self) -> str:
        return "Seat(3)"


def lines_of(out: io.StringIO) -> list[str]:
    text = out.getvalue()
    assert text.endswith("\n")
    return text.splitlines()


def test_a_line_is_what_structlogs_json_renderer_writes_with_an_iso_utc_timestamp() -> None:
    out = io.StringIO()
    configure_logging("info", json=True, stream=out, cache=False)
    before = datetime.now(UTC)
    get_logger("daemon.table", table="B01").info(
        "table.device_command", device="桌 shoe", chip=Chip(), seat=Seat(), count=3, ok=True
    )
    after = datetime.now(UTC)
    (line,) = lines_of(out)
    fields = json.loads(line)
    assert list(fields) == [
        "table", "logger", "device", "chip", "seat", "count", "ok", "event", "level", "timestamp",
    ]  # fmt: skip
    assert fields["chip"] == "chip 500" and fields["seat"] == "Seat(3)"
    assert fields["device"] == "桌 shoe" and "\\u684c" in line  # ASCII escapes, as json.dumps
    assert (fields["event"], fields["level"]) == ("table.device_command", "info")
    # The same text, to the byte, as structlog's JSONRenderer makes of the same fields.
    assert line == structlog.processors.JSONRenderer()(None, "info", dict(fields))
    stamp = fields["timestamp"]
    assert ISO_UTC.fullmatch(stamp), stamp
    when = datetime.fromisoformat(stamp)
    assert when.utcoffset() == timedelta(0)
    assert before - timedelta(microseconds=1) <= when <= after


def test_the_timestamp_follows_the_clock_across_seconds_and_back() -> None:
    """The text up to the second is made once a second and kept: each line still carries its
    own time, a clock stepped back (NTP) included, to the microsecond."""
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    second = 1_796_083_200 * 10**9  # 2026-12-01T00:00:00Z
    times = [
        second + 1_000,
        second + 999_999_999,  # the last microsecond of that second
        second + 10**9,  # the next one, on the whole second
        second + 10**9 + 5_000,
        second - 1,  # stepped back: the last second of November
        second + 86_400 * 10**9 + 123_456_789,  # a day on
    ]
    clock = iter(times)
    stamp = _UtcTimestamp(lambda: next(clock))
    for ns in times:
        expected = epoch + timedelta(microseconds=ns // 1000)
        written = stamp(None, "info", {})["timestamp"]
        assert written == expected.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        assert datetime.fromisoformat(written) == expected
    assert written == "2026-12-02T00:00:00.123456Z"


def test_an_exception_is_structured_without_locals_and_stdlib_lines_share_the_form() -> None:
    out = io.StringIO()
    configure_logging("info", json=True, stream=out, cache=False)
    secret = "token-789"  # noqa: S105 -- must not reach the log
    try:
        raise KeyError(len(secret))
    except KeyError:
        get_logger("daemon.api").exception("api.request_failed", path="/api/state")
    logging.getLogger("uvicorn.error").warning("listening on %s", "127.0.0.1:8700")
    failed, uvicorn = (json.loads(line) for line in lines_of(out))
    assert "token-789" not in out.getvalue()
    assert failed["level"] == "error" and failed["path"] == "/api/state"
    (frame,) = failed["exception"][0]["frames"]
    assert frame["name"].endswith("share_the_form") and "locals" not in frame
    assert failed["exception"][0]["exc_type"] == "KeyError"
    assert list(uvicorn) == ["event", "logger", "level", "timestamp"]
    assert uvicorn["logger"] == "uvicorn.error" and uvicorn["level"] == "warning"
    assert ISO_UTC.fullmatch(failed["timestamp"]) and ISO_UTC.fullmatch(uvicorn["timestamp"])


def test_a_debug_line_is_not_written_at_info() -> None:
    out = io.StringIO()
    configure_logging("info", json=True, stream=out, cache=False)
    get_logger("drivers").debug("shoe.card_read", sequence=1)
    assert out.getvalue() == ""
    configure_logging("debug", json=True, stream=out, cache=False)
    get_logger("drivers").debug("shoe.card_read", sequence=1)
    assert json.loads(out.getvalue())["level"] == "debug"


# Logs to a fully buffered file (and to stderr, a pipe here, as under systemd), structlog's
# lines and a stdlib logger's, then kills itself with SIGKILL: no flush at exit, no handler.
KILLED = """
import logging, os, signal, sys
from daemon.logging import _UtcTimestamp, configure_logging, get_logger
target = sys.argv[1]
stream = sys.stderr if target == "stderr" else open(target, "w", buffering=1 << 20)
configure_logging("info", stream=stream)
log = get_logger("daemon.test")
for n in range(200):
    log.info("daemon.line", n=n)
    logging.getLogger("uvicorn.error").warning("stdlib %d", n)
os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.parametrize("target", ["stderr", "file"])
def test_a_killed_process_has_written_every_line_it_logged(tmp_path: Path, target: str) -> None:
    path = tmp_path / "tabled.log"
    done = subprocess.run(
        [sys.executable, "-c", KILLED, "stderr" if target == "stderr" else str(path)],
        check=False, capture_output=True, text=True, timeout=60, cwd=REPO, env=environment(),
    )  # fmt: skip
    assert done.returncode == -9
    text = done.stderr if target == "stderr" else path.read_text()
    lines = [json.loads(line) for line in text.splitlines()]
    assert [line["n"] for line in lines if line["event"] == "daemon.line"] == list(range(200))
    assert [line["event"] for line in lines if line.get("logger") == "uvicorn.error"] == [
        f"stdlib {n}" for n in range(200)
    ]


def test_a_devices_words_on_a_terminal_are_shown_with_their_controls_escaped() -> None:
    out = io.StringIO()
    configure_logging("info", json=False, stream=out, cache=False)
    words = "lid open\x1b[2J\x1b]0;owned\x07\x9b31m\u202e\rdone"
    get_logger("daemon.table").warning("device.fault", device="shoe_reader", fault=words)
    logging.getLogger("daemon.stdlib").warning("said %s", words)
    text = out.getvalue()
    assert not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e]", text), repr(text)
    assert text.count(words.encode("unicode_escape").decode()) == 2, text
    out = io.StringIO()  # a pipe: JSON lines, ASCII-escaped; the same words once parsed
    configure_logging("info", json=True, stream=out, cache=False)
    get_logger("daemon.table").warning("device.fault", fault=words)
    assert out.getvalue().isascii() and json.loads(out.getvalue())["fault"] == words
