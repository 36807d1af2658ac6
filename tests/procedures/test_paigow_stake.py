"""Portaria 15/90/M Art. 5(3): 「摇骰前，庄家须把该局之赌注置於证上」 — the banker's stake is on
the table before the shake. After the shake a stake is refused as a bet is, citing the closing of
the bets at the shake (Art. 2(7)), in a fault's HOLD as in any phase: a dealer told only that
the table is held would expect to place it once the hold clears."""

from __future__ import annotations

import pytest
from procedure_drive import DEALER, device, paigow_betting, paigow_shake, paigow_table

CLOSED = "Portaria 15/90/M Art. 2(7)"


@pytest.mark.article("15/90/M", "5(3)", "2(7)")
def test_the_bankers_stake_after_the_shake_is_refused_as_the_bets_closed() -> None:
    table = paigow_table()
    table.ok("take_bank", DEALER, {"player": "B", "seat": 0})
    table.ok("confirm_tile_shuffle", DEALER, {"new_set": False})
    paigow_betting(table)
    paigow_shake(table)
    assert table.proc.phase == "DEALING"
    refused = table.refused("place_stake", DEALER, {"amount": 2000}).violation
    assert refused is not None and refused.article == CLOSED
    assert "closed at the shake" in refused.reason
    fault = {"device": "dice_shaker", "fault": "shaker detached"}
    table.ok("door_opened", device("dice_shaker"), fault)
    assert table.proc.phase == "HOLD"
    held = table.refused("place_stake", DEALER, {"amount": 2000}).violation
    assert held is not None and held.article == CLOSED
