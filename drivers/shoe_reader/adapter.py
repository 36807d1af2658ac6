"""The shoe reader to the procedure: each card read (and each misread) is `card_read`; `arm`
tells the reader whether the shoe is freshly loaded. A duplicate or a misread is reported twice
by the reader (the draw itself, then a fault): when the procedure tilted on the draw, the fault
that follows it is not fed again.

The cut card (the white card, Portaria 51/89/M Art. 1-2(a)) reached while the deal is under way
means it was left among the cards: no card was dealt in its draw, so the deal's order stands,
but the dealer must take it out and a supervisor look before the next card. It HOLDs the table
like a shoe taken out (`door_opened`, journaled as `table.held` with where it came out); a
supervisor's clear resumes the deal from the same next card (docs/security.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from drivers.adapter import STANDARD_DECK, DeviceAdapter, ProcedureInput
from drivers.events import DeviceFault, DriverEvent
from drivers.shoe_reader.driver import CardDrawn, CutCardReached, Misread, ShoeReaderDriver


class ShoeReaderAdapter(DeviceAdapter):
    # Faults a card's own read reports (a misread, a duplicate).
    CARD_RESULT_FAULTS: ClassVar[frozenset[str]] = frozenset({"misread", "duplicate_card"})

    _fault_taken = False  # the procedure tilted on the last card read: its fault follows

    def input_for(self, event: DriverEvent) -> ProcedureInput | None:
        if isinstance(event, Misread) and "card_read" in self.actions:
            # A card went past the reader unread: its place in the deal is known, its face is
            # not. The procedure tilts and keeps the place for a card entered by hand (an
            # override a supervisor approves); the fault that follows says the same thing.
            return ProcedureInput("card_read", {"misread": True, "index": event.sequence})
        if isinstance(event, CardDrawn):
            if event.out_of_phase:
                return None  # not a card of the deal: its card_out_of_phase fault follows
            card = {"card": event.card, "face_up": event.face_up, "index": event.sequence}
            return ProcedureInput("card_read", card)
        if isinstance(event, Misread):
            return None
        if isinstance(event, CutCardReached):
            fault = f"cut card reached after {event.sequence} card(s)"
            return ProcedureInput("door_opened", {"device": self.name, "fault": fault})
        return super().input_for(event)

    def fault_input(self, fault: DeviceFault) -> ProcedureInput | None:
        if fault.kind in self.CARD_RESULT_FAULTS and self._fault_taken:
            self._fault_taken = False
            return None  # the procedure found it in the card's own read (and tilted)
        return super().fault_input(fault)

    def taken(self, item: ProcedureInput, tilted: bool) -> None:
        if item.action == "card_read":
            self._fault_taken = tilted

    async def send(self, command: str, args: Mapping[str, Any]) -> None:
        driver = self.driver
        if command == "arm" and isinstance(driver, ShoeReaderDriver):
            # A whole deck to deal is a freshly loaded shoe: its draw count starts again.
            await driver.arm(new_shoe=int(args.get("cards", STANDARD_DECK)) == STANDARD_DECK)
            return
        await super().send(command, args)
