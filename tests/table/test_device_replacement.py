"""A device replaced by another unit of its approved build (daemon.procedures.overrides): on
`tabled run --http` with simulated devices, through the API as the consoles use it. The shaker
is swapped for another unit (a new serial) and power-cycled: the table TILTs and no clear goes
until one supervisor proposes the new unit (`replace_device`) and a second, named one approves
it; `device.replaced` names both, the old serial and the new; then the device is healthy and
the round resumes. A unit whose firmware the approved list does not name can never be proposed,
and is never healthy."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from daemon.api.tokens import token_entry
from simulators.base import SIM_MAKE, firmware_digest
from simulators.spec import model_class
from tests.api.api_support import TOKENS, auth
from tests.daemon.cli_support import journal_lines, serving
from tests.table.scenario_support import table_config, toml

SECOND = ("chan.second", "second-supervisor-token-0123456789abcdefghijk")
SHAKER = model_class("dice_shaker")


def _config(tmp_path: Path) -> Path:
    data = table_config(tmp_path / "journal")
    tokens = tmp_path / "tokens.toml"
    entries = [token_entry(a, r, t) for r, (a, t) in TOKENS.items()]
    tokens.write_text("\n".join([*entries, token_entry(*SECOND[:1], "supervisor", SECOND[1])]))
    tokens.chmod(0o600)
    data["api"] = {"tokens_file": str(tokens)}
    path = tmp_path / "table.toml"
    digest = firmware_digest(SHAKER.MODEL, SHAKER.FIRMWARE).hex()
    approved = (
        f'\n[[devices.dice_shaker.approved]]\nmake = "{SIM_MAKE}"\nmodel = "{SHAKER.MODEL}"\n'
        f'firmware = "{SHAKER.FIRMWARE}"\nfirmware_hash = "{digest}"\n'
    )
    path.write_text(toml(data) + approved)
    return path


class Consoles:
    """The people at the table, each through the API with their own token."""

    def __init__(self, url: str) -> None:
        self.http = httpx.Client(base_url=url, timeout=60)

    def act(self, who: str, action: str, reason: str | None = None, **payload: Any) -> Any:
        headers = {"Authorization": f"Bearer {SECOND[1]}"} if who == "second" else auth(who)
        body: dict[str, Any] = {"payload": payload}
        if reason is not None:
            body["reason"] = reason
        answer = self.http.post(f"/api/actions/{action}", json=body, headers=headers)
        assert answer.status_code in (200, 409, 422), answer.text
        return answer.json()

    def train(self, op: str, **body: Any) -> None:
        answer = self.http.post(f"/api/training/{op}", json=body, headers=auth("admin"))
        assert answer.status_code == 200, answer.text

    def state(self) -> dict[str, Any]:
        answer = self.http.get("/api/state", headers=auth("supervisor"))
        assert answer.status_code == 200, answer.text
        body: dict[str, Any] = answer.json()["state"]
        return body

    def until(self, what: str, test: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        deadline = time.monotonic() + 60
        while not test(state := self.state()):
            assert time.monotonic() < deadline, f"never {what}: {state.get('phase')}"
            time.sleep(0.1)
        return state

    def swap_shaker(self, fault: str) -> None:
        """Another unit on the shaker's cable: `fault` is what it is (`replaced`: the approved
        build with another serial; `unapproved_firmware`), its power cycled."""
        self.train("inject", device="dice_shaker", fault=fault)
        self.train("power", device="dice_shaker", on=False)
        self.until("held", lambda s: s["phase"] in ("HOLD", "TILT"))
        self.train("power", device="dice_shaker", on=True)
        self.until("tilted", lambda s: s["phase"] == "TILT")


def _refused(answer: Any, words: str) -> None:
    assert answer.get("accepted") is not True, answer
    assert words in str(answer), answer


def test_a_new_unit_of_the_approved_build_is_healthy_once_two_supervisors_approve_it(
    tmp_path: Path,
) -> None:
    config = _config(tmp_path)
    with serving("--config", str(config), "--http", "127.0.0.1:0", cwd=tmp_path) as (url, _):
        people = Consoles(url)
        people.until("at the equipment check", lambda s: s["phase"] == "EQUIPMENT_CHECK")
        assert people.act("dealer", "open_table")["accepted"] is True
        phase = people.until("open", lambda s: s["phase"] != "EQUIPMENT_CHECK")["phase"]

        people.swap_shaker("replaced")
        # Not the device the table opened with: no clear, however often asked.
        _refused(people.act("supervisor", "clear_tilt", reason="looks fine"), "dice_shaker")
        # One supervisor proposes the new unit; the proposer cannot approve, a dealer cannot.
        proposed = people.act(
            "supervisor", "replace_device", "shaker swapped for a spare", device="dice_shaker"
        )
        assert proposed.get("accepted") is True, proposed
        _refused(
            people.act("supervisor", "approve_override", reason="checked the unit"), "proposes"
        )
        assert people.http.post(
            "/api/actions/approve_override", json={"payload": {}, "reason": "checked the unit"},
            headers=auth("dealer"),
        ).status_code == 403  # fmt: skip
        _refused(people.act("supervisor", "clear_tilt", reason="checked the unit"), "dice_shaker")
        approved = people.act("second", "approve_override", reason="serial checked on the unit")
        assert approved["accepted"] is True, approved
        # Now the unit on the line is the table's: healthy, and the round goes on.
        assert people.act("supervisor", "clear_tilt", reason="replaced")["accepted"] is True
        people.until("resumed", lambda s: s["phase"] == phase)

        # A unit whose firmware is not approved is never proposed, never healthy.
        people.train("clear", device="dice_shaker", fault="replaced")
        people.swap_shaker("unapproved_firmware")
        _refused(
            people.act(
                "supervisor", "replace_device", "swapped for another unit", device="dice_shaker"
            ),
            "not approved",
        )
        _refused(people.act("supervisor", "clear_tilt", reason="checked the unit"), "dice_shaker")
        assert people.state()["phase"] == "TILT"

    lines = journal_lines(tmp_path / "journal")
    [replaced] = [line for line in lines if line["event"] == "device.replaced"]
    payload = replaced["payload"]
    assert payload["device"] == "dice_shaker"
    assert payload["old_serial"].startswith(f"SIM-{SHAKER.MODEL}-")
    assert payload["new_serial"] == payload["old_serial"] + "-R"
    assert payload["proposed_by"] == f"supervisor:{TOKENS['supervisor'][0]}"
    assert payload["approved_by"] == f"supervisor:{SECOND[0]}"
    assert payload["reason"] == "shaker swapped for a spare"
    assert payload["approval_reason"] == "serial checked on the unit"
    assert (payload["model"], payload["firmware"]) == (SHAKER.MODEL, SHAKER.FIRMWARE)
    healthy = [
        line["seq"] for line in lines
        if line["event"] == "device.healthy" and line["payload"]["device"] == "dice_shaker"
    ]  # fmt: skip
    assert healthy and min(healthy) > replaced["seq"]
    # Nothing was healthy for the unapproved unit after it came on the line.
    unapproved = max(
        line["seq"] for line in lines
        if line["event"] == "table.tilted" and "firmware not approved" in line["payload"]["fault"]
    )  # fmt: skip
    assert max(healthy) < unapproved
