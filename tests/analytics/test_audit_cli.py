"""`tabled audit` end to end: a short simulated table run whose devices have honest faults set by
their `sim://` URLs, then the audit as a process on its journal; and a fair run beside it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from daemon.analytics.hold import game_math
from tests.daemon.cli_support import REPO, tabled

ROUNDS = "24"
FAULTY = {
    "sim://dice_shaker": "sim://dice_shaker?bias=6:0.5",
    "sim://shuffler": "sim://shuffler?model=riffle&riffles=2",
    "sim://shoe_reader": "sim://shoe_reader?misread=40",
}


def _played(folder: Path, ports: dict[str, str], seed: str) -> Path:
    config = (REPO / "config" / "table.toml").read_text()
    config = config.replace('durability = "fsync"', 'durability = "none"')
    for plain, url in ports.items():
        config = config.replace(f'port = "{plain}"', f'port = "{url}"')
    (folder / "t.toml").write_text(config)
    journal = folder / "journal"
    done = tabled(
        "run", "--config", "t.toml", "--autoplay", ROUNDS, "--seed", seed,
        "--fault-share", "0", "--violation-share", "0", "--journal", str(journal),
        cwd=folder, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return journal


@pytest.fixture(scope="module")
def faulty(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _played(tmp_path_factory.mktemp("faulty"), FAULTY, "3")


@pytest.fixture(scope="module")
def fair(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _played(tmp_path_factory.mktemp("fair"), {}, "5")


def _audit(kind: str, journal: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    done = tabled("audit", kind, str(journal), "--json", *extra, timeout=300)
    assert done.returncode in (0, 4), done.stderr
    return done.returncode, json.loads(done.stdout)


@pytest.mark.parametrize("kind", ["dice", "shuffle", "reader"])
def test_each_faulty_device_is_flagged_by_serial_and_exits_4(faulty: Path, kind: str) -> None:
    status, report = _audit(kind, faulty)
    assert status == 4 and report["flagged"] is True
    (device,) = report["devices"]
    assert device["flagged"] is True and device["serial"].startswith("SIM-")
    assert device["p_value"] < 0.001 and device["power"] and device["verdict"].startswith("FLAG")


@pytest.mark.parametrize("kind", ["dice", "shuffle", "reader"])
def test_the_same_devices_without_faults_pass(fair: Path, kind: str) -> None:
    status, report = _audit(kind, fair)
    assert status == 0 and report["flagged"] is False
    (device,) = report["devices"]
    assert device["flagged"] is False and device["samples"] > 0


def test_the_words_name_the_verdict_statistic_p_value_and_power(faulty: Path) -> None:
    done = tabled("audit", "shuffle", str(faulty), timeout=300)
    assert done.returncode == 4
    text = done.stdout
    assert "FLAGGED" in text and "rising sequences" in text and "like 2." in text
    assert "statistic:" in text and "p-value:" in text and "power:" in text


def test_serial_keeps_one_device_and_since_starts_later(faulty: Path) -> None:
    _, report = _audit("dice", faulty)
    serial = report["devices"][0]["serial"]
    _, only = _audit("dice", faulty, "--serial", serial)
    assert [d["serial"] for d in only["devices"]] == [serial]
    _, none = _audit("dice", faulty, "--serial", "SIM-NOBODY")
    assert none["devices"] == [] and none["flagged"] is False
    _, later = _audit("dice", faulty, "--since", "2999-01-01")
    assert later["devices"] == []


def test_the_hold_is_set_against_the_rule_sets_game_math(fair: Path) -> None:
    _, report = _audit("hold", fair, "--by", "dealer")
    (group,) = report["groups"]
    assert group["group"] == "dealer dealer:D1" and group["rulesets"] == ["macau-1989"]
    house = game_math()["macau-1989"]["house_advantage"]
    assert group["theoretical_hold"] == pytest.approx(house)
    assert group["drop"] > 0 and abs(group["statistic"]) < 50


def test_bad_input_is_one_line_and_status_2(tmp_path: Path) -> None:
    done = tabled("audit", "dice", str(tmp_path / "nowhere"))
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "no journal" in done.stderr
    done = tabled("audit", "reader", str(tmp_path), "--misread-limit", "0")
    assert done.returncode == 2 and "--misread-limit" in done.stderr


def test_the_daemon_starts_without_numpy_or_scipy() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, daemon.cli, daemon.run, daemon.table.runtime, daemon.api.process, "
            "daemon.floor.cli; print(sorted(m for m in sys.modules "
            "if m.split('.')[0] in ('numpy', 'scipy', 'daemon') and "
            "m.split('.')[0] != 'daemon' or m.startswith('daemon.analytics')))",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
        timeout=120,
    )
    assert done.stdout.strip() == "[]"


def test_the_report_is_one_html_page_with_its_charts_and_a_pdf(
    faulty: Path, tmp_path: Path
) -> None:
    out = tmp_path / "audit.html"
    done = tabled("audit", "report", str(faulty), "-o", str(out), timeout=300)
    assert done.returncode == 4, done.stderr
    assert done.stdout.split() == [str(out), str(out.with_suffix(".pdf"))]
    page = out.read_text()
    # A face histogram, a heat map and a rising-sequence histogram, misreads by dealer, hold.
    assert page.count("data:image/png;base64,") == 5
    assert page.count("class='flagged'") == 3 and "Hold against theory" in page
    assert out.with_suffix(".pdf").read_bytes().startswith(b"%PDF")
