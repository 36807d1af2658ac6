"""The worked example of docs/devices.md as a vendor ships it: examples/tabled-ascii-shoe built
and installed by pip as its own package (offline, with the hatchling the test extra installs),
then used by `tabled` processes that find it through its `tabled.devices` entry point alone:
listed by `tabled devices --kinds`, served by `tabled sim`, probed by `tabled devices`, and
dealing every card of a whole Thirteen table's rounds (`tabled run --autoplay`) with no line of
the table's code knowing it. A plug-in that cannot be read is one line naming its package."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from drivers.kinds import GROUP
from simulators.base import SIM_MAKE, firmware_digest
from tests.daemon.cli_support import REPO, TABLED, environment, journal_lines, tabled
from tests.device_plugins import EXAMPLE, write_dist_info

ASCII_SHOE = f"""
[devices.shoe_reader]
kind = "ascii_shoe"
package_sha256 = "{{digest}}"
port = "sim://ascii_shoe"
baudrate = 9600
[devices.shoe_reader.options]
line_end = "crlf"
[[devices.shoe_reader.approved]]
make = "{SIM_MAKE}"
model = "CS-100"
firmware = "3.1.4"
firmware_hash = "{firmware_digest("CS-100", "3.1.4").hex()}"
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example installed by pip into a folder of its own (`--target`)."""
    target = tmp_path_factory.mktemp("site")
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index"]
    built = subprocess.run(
        [*pip, "--no-build-isolation", "--target", str(target), str(EXAMPLE)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    assert (target / "tabled_ascii_shoe-0.1.0.dist-info" / "entry_points.txt").is_file()
    return target


def env_with(site: Path) -> dict[str, str]:
    # Only the installed copy, never the source folder the rest of the suite reads it from.
    return {"PYTHONPATH": f"{site}{os.pathsep}{REPO}"}


def digest_of(env: dict[str, str], kind: str) -> str:
    """The digest of kind `kind`'s installed package, as `tabled devices --kinds` lists it for
    the operator to compare with the approval's."""
    listed = tabled("devices", "--kinds", "--json", **env)
    (row,) = (row for row in json.loads(listed.stdout) if row["kind"] == kind)
    return str(row["package_sha256"])


def table_config(tmp_path: Path, site: Path) -> Path:
    """The default table (config/table.toml, every device simulated) with the CS-100 at the
    shoe reader's place, its package approved as installed in `site`."""
    text = (REPO / "config" / "table.toml").read_text()
    start = text.index("[devices.shoe_reader]")
    end = text.index("\n[devices.", start) + 1  # the next device's section
    path = tmp_path / "table.toml"
    shoe = ASCII_SHOE.replace("{digest}", digest_of(env_with(site), "ascii_shoe"))
    path.write_text(text[:start] + shoe.lstrip() + "\n" + text[end:])
    return path


def test_the_installed_package_is_listed_by_tabled_devices(site: Path) -> None:
    listed = tabled("devices", "--kinds", "--json", **env_with(site))
    assert listed.returncode == 0, listed.stderr
    kinds = {row["kind"]: row for row in json.loads(listed.stdout)}
    assert kinds["ascii_shoe"]["role"] == "shoe_reader"
    assert (kinds["ascii_shoe"]["package"], kinds["ascii_shoe"]["version"]) == (
        "tabled-ascii-shoe",
        "0.1.0",
    )
    assert kinds["shoe_reader"]["package"] == "tabled"
    without = tabled("devices", "--kinds", "--json")  # not installed: not there
    assert "ascii_shoe" not in {row["kind"] for row in json.loads(without.stdout)}


def test_a_whole_table_deals_its_rounds_from_the_plugins_shoe(site: Path, tmp_path: Path) -> None:
    journal = tmp_path / "journal"
    config = table_config(tmp_path, site)
    args = ("--config", str(config), "--journal", str(journal), "--seed", "5", "--autoplay", "2")
    played = tabled("run", *args, timeout=300, **env_with(site))
    assert played.returncode == 0, played.stderr
    lines = journal_lines(journal)
    (identified,) = (
        r for r in lines if r["event"] == "device.identified" and r["actor"] == "device:shoe_reader"
    )
    assert identified["payload"]["model"] == "CS-100" and identified["payload"]["approved"]
    # what drove it is on the record: the kind, and the package and version that provide it
    assert identified["payload"]["kind"] == "ascii_shoe"
    assert identified["payload"]["driver"] == "tabled-ascii-shoe 0.1.0"
    assert identified["payload"]["package_sha256"] == digest_of(env_with(site), "ascii_shoe")
    dealt = [r for r in lines if r["event"] == "card.dealt"]
    assert len(dealt) == 2 * 52 and all(r["actor"] == "device:shoe_reader" for r in dealt)
    assert sum(r["event"] == "round.settled" for r in lines) == 2
    check = tabled("verify-log", str(journal))
    assert check.returncode == 0, check.stdout


@pytest.fixture
def sim(site: Path, tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    written = tmp_path / "written.toml"
    config = table_config(tmp_path, site)
    args = ["sim", "--config", str(config), "--json", "--speed", "0", "--write-config", written]
    proc = subprocess.Popen(
        [*TABLED, *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(**env_with(site)),
    )
    yield proc, written
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)


def test_tabled_sim_serves_it_on_a_pty_and_tabled_devices_probes_it(
    site: Path, sim: tuple[subprocess.Popen[str], Path]
) -> None:
    proc, written = sim
    assert proc.stdout is not None
    served = {}
    while "control" not in (item := json.loads(proc.stdout.readline())):
        served[item["device"]] = item
    assert served["shoe_reader"]["kind"] == "ascii_shoe"
    assert served["shoe_reader"]["port"].startswith("/dev/pts/")
    assert 'kind = "ascii_shoe"' in written.read_text()
    assert f'package_sha256 = "{digest_of(env_with(site), "ascii_shoe")}"' in written.read_text()
    probed = tabled("devices", "--config", str(written), "--json", **env_with(site))
    assert probed.returncode == 0, probed.stdout + probed.stderr
    (shoe,) = (r for r in json.loads(probed.stdout) if r["device"] == "shoe_reader")
    assert (shoe["kind"], shoe["link"], shoe["model"], shoe["approved"]) == (
        "ascii_shoe",
        "up",
        "CS-100",
        True,
    )


def test_a_broken_plugin_is_one_line_naming_its_package(tmp_path: Path) -> None:
    site = tmp_path / "site"
    write_dist_info(site, "acme-rfid-shoe", "2.0", {GROUP: {"rfid_shoe": "acme_rfid:KIND"}})
    env = {"PYTHONPATH": f"{site}{os.pathsep}{REPO}"}
    line = (
        f"{GROUP} plug-in 'rfid_shoe' of package acme-rfid-shoe 2.0: cannot load acme_rfid:KIND: "
        "ModuleNotFoundError: No module named 'acme_rfid'"
    )
    listed = tabled("devices", "--kinds", **env)
    assert listed.returncode == 1 and "ascii_shoe" not in listed.stdout
    assert listed.stderr.strip() == f"tabled devices: {line}"
    config = tmp_path / "table.toml"
    config.write_text('[devices.shoe_reader]\nkind = "rfid_shoe"\nport = "/dev/ttyS9"\n')
    unapproved = tabled("run", "--config", str(config), **env)
    assert unapproved.returncode == 2, unapproved.stderr
    assert "package_sha256: the rfid_shoe kind is a plug-in's" in unapproved.stderr
    digest = subprocess.run(
        [sys.executable, "-c", "import drivers.kinds as k; print(k.package_digest('rfid_shoe'))"],
        capture_output=True, text=True, timeout=60, env=environment(**env), check=True,
    ).stdout.strip()  # fmt: skip
    config.write_text(
        f'[devices.shoe_reader]\nkind = "rfid_shoe"\npackage_sha256 = "{digest}"\n'
        'port = "/dev/ttyS9"\n'
    )
    for command in ("devices", "sim", "run"):
        refused = tabled(command, "--config", str(config), **env)
        assert refused.returncode == 2, (command, refused.stderr)
        assert "Traceback" not in refused.stderr
        assert f"devices.shoe_reader.kind: {line}" in refused.stderr, (command, refused.stderr)
