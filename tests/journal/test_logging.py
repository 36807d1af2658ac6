from __future__ import annotations

import asyncio
import io
import json
import logging
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog

from daemon.logging import configure_logging, get_logger
from simulators.world import forget_world
from tests.daemon.cli_support import journal_lines
from tests.table.scenario_support import make_table, new_world, table_config, until
from tests.table.test_rounds import draw, play_until, quiet_autoplay, thirteen_of


@pytest.fixture(autouse=True)
def _restore_structlog() -> Iterator[None]:
    saved = structlog.get_config()
    root = logging.getLogger()
    level = root.level
    yield
    structlog.configure(**saved)
    root.setLevel(level)
    for handler in list(logging.getLogger().handlers):
        if getattr(handler, "_tabled", False):
            logging.getLogger().removeHandler(handler)


def test_operational_log_is_json_lines_with_level_filtering() -> None:
    out = io.StringIO()
    configure_logging("info", json=True, stream=out, cache=False)
    log = get_logger("drivers.shoe")
    log.debug("shoe.frame_bytes", data="0201")
    log.info("shoe.link_up", port="sim://shoe_reader")
    logging.getLogger("uvicorn.error").warning("listening on %s", "127.0.0.1:8700")
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [line["event"] for line in lines] == ["shoe.link_up", "listening on 127.0.0.1:8700"]
    assert lines[0]["logger"] == "drivers.shoe" and lines[0]["level"] == "info"
    assert lines[0]["timestamp"].endswith("Z")
    assert lines[1]["logger"] == "uvicorn.error" and lines[1]["level"] == "warning"


def test_tracebacks_are_structured_and_carry_no_locals() -> None:
    out = io.StringIO()
    configure_logging("info", json=True, stream=out, cache=False)
    secret = "token-123"  # noqa: S105 -- must not reach the log
    try:
        raise RuntimeError(len(secret))
    except RuntimeError:
        get_logger().exception("api.request_failed")
    text = out.getvalue()
    assert "token-123" not in text
    assert json.loads(text)["exception"][0]["exc_type"] == "RuntimeError"


def test_console_tracebacks_are_plain_and_carry_no_locals() -> None:
    # structlog's console renderer would use rich (installed here, with the test tools), which
    # prints every frame's locals.
    out = io.StringIO()
    configure_logging("info", json=False, stream=out, cache=False)
    secret = "token-456"  # noqa: S105 -- must not reach the log
    try:
        raise RuntimeError(len(secret))
    except RuntimeError:
        get_logger().exception("api.request_failed")
    text = out.getvalue()
    assert "Traceback (most recent call last)" in text and "RuntimeError: 9" in text
    assert "token-456" not in text


def test_console_format_and_bad_level() -> None:
    out = io.StringIO()
    configure_logging("warning", json=False, stream=out, cache=False)
    get_logger().warning("journal.rotated", new="journal-000000000100-20270115.jsonl")
    assert "journal.rotated" in out.getvalue() and not out.getvalue().startswith("{")
    with pytest.raises(ValueError, match="log level"):
        configure_logging("loud")


def test_the_journal_reports_rotation_to_the_operational_log(tmp_path: Path) -> None:
    code = (
        "import sys; from pathlib import Path;"
        "from daemon.logging import configure_logging; configure_logging('info', json=True);"
        "from daemon.config import JournalConfig; from daemon.journal import Journal;"
        f"j = Journal.open(JournalConfig(dir=Path({str(tmp_path / 'j')!r}), rotate_bytes=100),"
        " 'T01'); j.append('table.bets_closed', actor='dealer', commit=True); j.close()"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout == ""  # the operational log goes to stderr, never to stdout
    events = [json.loads(line)["event"] for line in done.stderr.splitlines()]
    assert events == ["journal.rotated"]


def test_before_configuration_the_operational_log_stays_off_stdout(tmp_path: Path) -> None:
    code = (
        "from pathlib import Path;"
        "from daemon.config import JournalConfig; from daemon.journal import Journal;"
        f"j = Journal.open(JournalConfig(dir=Path({str(tmp_path)!r}), rotate_bytes=100), 'T01');"
        "j.append('table.bets_closed', actor='dealer', commit=True); j.close(); print('done')"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout == "done\n"
    assert "journal.rotated" in done.stderr


def test_the_state_machine_library_does_not_narrate_each_callback_at_info() -> None:
    """`transitions` logs every callback it runs at INFO (four lines an input): noise for IT,
    and time on the path from a device frame to the journal. Its warnings still show, and
    `--log-level debug` brings the narration back."""
    from daemon.procedures.thirteen import ThirteenProcedure  # noqa: PLC0415 - after configuring

    out = io.StringIO()
    configure_logging("info", json=True, stream=out, cache=False)
    proc = ThirteenProcedure()
    proc.handle(
        "device_identified", "device:shuffler", {"device": "shuffler", "approved": True}, 1.0
    )
    logging.getLogger("transitions.core").warning("a real problem")
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [(line["logger"], line["event"]) for line in lines] == [
        ("transitions.core", "a real problem")
    ]
    configure_logging("debug", json=True, stream=out, cache=False)
    proc.handle(
        "device_identified", "device:shuffler", {"device": "shuffler", "approved": True}, 2.0
    )
    assert "transitions.core" in out.getvalue().split("a real problem", 1)[1]
    logging.getLogger("transitions").setLevel(logging.NOTSET)


def test_a_refusal_naming_a_face_down_card_does_not_name_it_in_the_system_log(
    tmp_path: Path,
) -> None:
    """Whoever reads journald is no role the table serves cards to: a refused entry of a card
    already dealt ("Qh has already been dealt", a face-down card) is logged by its seq,
    article, action and phase; its reason stays in the journal (docs/operations.md)."""
    out = io.StringIO()
    configure_logging("info", json=True, stream=out, cache=False)
    key, world = new_world()
    table, _ = make_table(table_config(tmp_path / "j", world=key))

    async def main() -> str:
        await table.start()
        try:
            player = quiet_autoplay(table, key, entered_share=1.0)
            await play_until(player, "DEALING")
            proc = thirteen_of(table)
            await draw(player, 3)
            world.inject("shoe_reader", "misread")
            await player._thirteen_step("DEALING")  # the reader misses card #4: a TILT
            await until(table, lambda: proc.phase == "TILT", "the TILT")
            await player.supervise()
            assert proc.misread is not None and proc.phase == "DEALING"
            card = str(proc.dealt[0]["card"])  # face down, in play
            result = await table.act("propose_card", "dealer:D1", "dealer", {"card": card})
            assert not result["accepted"]
            return card
        finally:
            await table.stop()

    try:
        card = asyncio.run(main())
    finally:
        forget_world(key)
    refused = [
        r["payload"] for r in journal_lines(tmp_path / "j") if r["event"] == "table.violation"
    ]
    assert refused[-1]["reason"] == f"{card} has already been dealt"  # the journal has it
    assert card not in out.getvalue() and "already been dealt" not in out.getvalue()
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    [logged] = [r for r in records if r["event"] == "table.violation"]
    assert (logged["action"], logged["article"], logged["phase"]) == (
        "propose_card",
        refused[-1]["article"],
        "DEALING",
    )
    assert logged["seq"] > 0
