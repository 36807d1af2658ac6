"""The scripted dealer of a Thirteen Cards round, with its players' bets, cut and arrangements.

Every rule set plays: against the banker (macau-1989, hk-common, hk-extended), or each seat
against each without a banker (hk-points, hk-four), where one player takes each seat and every
seat arranges once the deal is done. Bets are in the table's units (Art. 11; its `stakes`)."""

from __future__ import annotations

from daemon.autoplay.base import ARRANGEMENT_SECONDS, PLAYERS, AutoplayError
from daemon.autoplay.faults import FaultInjection
from daemon.autoplay.players import Rows, rows_payload
from daemon.procedures.thirteen import ThirteenProcedure
from daemon.rules import thirteen as rules13
from daemon.rules.cards import parse_card
from drivers.shoe_reader.messages import card_name


def house_way(cards: list[str], rules: rules13.RuleSet) -> Rows:
    """The house way of the table's rule set (never a foul under its own foul rule)."""
    head, middle, tail = rules13.house_way([parse_card(c) for c in cards], rules)
    return [str(c) for c in head], [str(c) for c in middle], [str(c) for c in tail]


def upside_down(cards: list[str], rules: rules13.RuleSet) -> Rows:
    """The house way turned upside down: the strongest row at the head (mostly a foul)."""
    head, middle, tail = house_way(cards, rules)
    return tail[:3], middle, head + tail[3:]


class ThirteenDealer(FaultInjection):
    # The seat whose player sets the hand upside down this round (the plan's foul), if any.
    _foul_seat: int | None = None

    async def _thirteen_step(self, phase: str) -> None:
        proc: ThirteenProcedure = self.proc
        if phase == "EQUIPMENT_CHECK":
            await self.wait(
                lambda: all(d in proc.identified for d in proc.devices), "devices identified"
            )
            await self.act("open_table")
        elif phase == "HAND_SHUFFLE":
            await self.strike("shuffle")
            await self.act("confirm_hand_shuffle")
        elif phase == "MACHINE_SHUFFLE":
            await self.wait(lambda: proc.phase != "MACHINE_SHUFFLE", "the shuffler's count")
        elif phase == "CUT":
            cards = self.rng.randint(10, 42)
            if self.plan.violations:
                await self.attempt(
                    "confirm_cut",
                    {"by": "player", "player": "P1", "cards": 6, "one_hand": True},
                    "short cut",
                )
            if self.rng.random() < 0.2:
                cut = {"by": "dealer", "players_declined": True, "cards": cards, "one_hand": True}
            else:
                cut = {"by": "player", "player": self.rng.choice(PLAYERS), "cards": cards}
                cut["one_hand"] = True
            await self.act("confirm_cut", cut)
        elif phase == "SHOE_LOADING":
            await self.act("load_shoe")
        elif phase == "BETTING":
            await self._thirteen_bets(proc)
        elif phase == "SHAKING":
            await self.wait(lambda: proc.phase != "SHAKING", "the dice")
        elif phase == "DEALING":
            await self._thirteen_deal(proc)
        elif phase == "BANKER_ARRANGING":
            # Art. 2(d): the banker arranges face down and says so; no card is named.
            await self.act("arrange_banker")
        elif phase == "BANKER_ARRANGED":
            await self.act("open_banker")
        elif phase == "PLAYERS_ARRANGING":
            await self._thirteen_arrangements(proc)
        elif phase == "SETTLING":
            await self._thirteen_open_hands(proc)
            await self.act("settle_round")
            for entry in proc.settlement or []:
                rules = entry.get("rules")
                if entry.get("late"):
                    self.summary.hands["late at the bell"] += 1
                elif isinstance(rules, dict) and rules.get("foul"):
                    self.summary.hands["foul"] += 1
            self._settled = True
        elif phase == "ROUND_OVER":
            await self.act("start_round")
        else:
            raise AutoplayError(f"no script for phase {phase}")

    def _bet_units(self, proc: ThirteenProcedure) -> list[int]:
        """The units a bet may be: the rule set's (Art. 11: 1, 2 or 3), within the table's
        minimum and maximum; one unit a seat when each point is paid in money."""
        if not proc.banker_game and proc.rules.stakes == "per-point":
            return [1]
        stakes = proc.stakes
        allowed = [
            units
            for units in (proc.units or (1, 2, 3, 5, 10))
            if stakes.floor <= units * stakes.unit
            and (stakes.maximum is None or units * stakes.unit <= stakes.maximum)
        ]
        if not allowed:
            raise AutoplayError("no bet of the rule set's units fits the table's limits")
        return sorted(allowed)

    async def _thirteen_bets(self, proc: ThirteenProcedure) -> None:
        if not proc.bets:
            await self.strike("betting")
            if self.proc.phase != "BETTING":
                return
            units = self._bet_units(proc)
            if proc.banker_game:
                players = self.rng.sample(PLAYERS, self.rng.randint(1, 4))
                seats: list[int | None] = [None] * len(players)
            else:
                # Each against each: one player a seat, two to four seats (seat 0 too).
                seats = list(sorted(self.rng.sample(range(4), self.rng.randint(2, 4))))
                players = self.rng.sample(PLAYERS, len(seats))
            for player, fixed in zip(players, seats, strict=True):
                # The draws in the order the script has always made them (a seeded run plays
                # the same rounds): units, seat, whether the money is sent too, seated.
                unit = self.rng.choice(units)
                seat = self.rng.randint(1, 3) if fixed is None else fixed
                with_amount = self.rng.choice((True, False, True))
                bet: dict[str, object] = {"player": player, "seat": seat, "units": unit}
                if with_amount:
                    bet["amount"] = unit * proc.stakes.unit  # the money, as the units make it
                bet["seated"] = self.rng.random() < 0.8
                await self.act("place_bet", bet)
                if self.proc.phase != "BETTING":
                    return
        if self.plan.violations:
            one = proc.stakes.unit
            if proc.banker_game:
                await self.attempt(
                    "place_bet",
                    {"player": "P9", "seat": 0, "amount": one, "units": 1, "seated": True},
                    "bet on the banker's seat",
                )
            else:
                held = proc.bets[0]["seat"]
                await self.attempt(
                    "place_bet",
                    {"player": "P9", "seat": held, "units": 1, "seated": True},
                    "a second player on a seat",
                )
            await self.attempt(
                "place_bet",
                {"player": "P9", "seat": 1, "amount": one + 1, "units": 1, "seated": True},
                "a bet's amount not its units' money",
            )
            highest = proc.highest_bettor()
            other = next(p for p in (*PLAYERS, "P9") if p != highest)
            await self.attempt("shake_dice", {"player": other}, "dice shaken by another player")
        await self.strike("shake")
        if self.proc.phase == "BETTING":
            await self.act("shake_dice", {"player": proc.highest_bettor()})

    async def _thirteen_deal(self, proc: ThirteenProcedure) -> None:
        if self._untrusted_deal:
            # A card went past the reader unread: the deal cannot be put right (Art. 4).
            self._untrusted_deal = False
            voided = await self.void("void_deal", "a card was misread")  # two supervisors
            if not voided["accepted"]:
                raise AutoplayError(f"void_deal refused: {voided['violation']}")
            self.summary.voided += 1
            return
        if proc.misread is not None and self._misread_card is not None:
            # The dealer shows the card the reader missed and enters it; the pit approves.
            card, self._misread_card = self._misread_card, None
            await self.act("propose_card", {"card": card, "note": "autoplay: shown face up"})
            await self.act(
                "approve_override",
                {"reason": "autoplay: the card checked on camera"},
                role="supervisor",
            )
            self.summary.supervisor["approve_override"] += 1
        if self.plan.violations and proc.bets:
            bet = dict(proc.bets[0])
            await self.attempt(
                "place_bet",
                {k: bet[k] for k in ("player", "seat", "amount", "units", "seated")},
                "bet after the dice",
            )
            await self.attempt(
                "withdraw_bet",
                {"player": bet["player"], "seat": bet["seat"]},
                "bet withdrawn after the dice",
            )
        # The dealer draws only once the reader is armed (the table arms it on entering DEALING
        # and again when a held deal resumes); a card drawn before is out of phase.
        await self.wait(self.table.quiet, "the shoe reader armed")
        strike_at = self.rng.randint(5, 45)
        while proc.phase == "DEALING":
            if len(proc.dealt) >= strike_at:
                await self.strike("deal")
            count = len(proc.dealt)
            reply = await self.control_request({"op": "draw"})
            if reply.get("reader") in ("shoe_removed", "blocked", "empty"):
                await self.wait(lambda: proc.phase != "DEALING", "the shoe's fault")
                return
            if reply.get("reader") == "misread":
                # The card the dealer holds up (the simulator says what it was).
                drawn = reply.get("drawn")
                self._misread_card = (
                    card_name(int(drawn["rank"]), int(drawn["suit"]))
                    if isinstance(drawn, dict) and "rank" in drawn
                    else None
                )
                await self.wait(lambda: proc.phase != "DEALING", "the misread")
                return
            await self.wait(
                lambda n=count: proc.phase != "DEALING" or len(proc.dealt) > n,  # type: ignore[misc]
                "the card read",
            )

    async def _place_banker(self, proc: ThirteenProcedure) -> None:
        """The banker's cards lie open: the dealer places them as the banker set them."""
        if proc.banker_game and proc.banker_opened and 0 not in proc.arrangements:
            banker = house_way(proc.seat_cards(0), proc.rules)
            await self.act("enter_arrangement", {"seat": 0, **rows_payload(banker)})

    async def _thirteen_arrangements(self, proc: ThirteenProcedure) -> None:
        await self._place_banker(proc)
        if proc.phase != "PLAYERS_ARRANGING":
            return
        seats = [s for s in proc.played_seats() if s not in proc.arranged]
        late = self.rng.choice(seats) if self.plan.late and seats else None
        self._foul_seat = seats[0] if self.plan.foul and seats and seats[0] != late else None
        for seat in seats:
            if seat == late:
                continue
            advisers = [
                b["player"]
                for b in proc.bets
                if b["seat"] == seat and b["player"] != proc.holder(seat)
            ]
            if advisers and self.plan.violations:
                # Art. 5: another bettor on the seat advises its holder; the dealer records it.
                await self.act("advise_holder", {"player": advisers[0], "seat": seat})
            # The player arranges face down and says so (Art. 2(d)); the cards are placed in
            # rows once the hand is opened against the banker's (Art. 8).
            await self.act("player_arranged", {"seat": seat})
        if late is not None and proc.phase == "PLAYERS_ARRANGING":
            if self.clock is None:
                raise AutoplayError("a late player needs a SimulationClock to jump the timer")
            self.clock.jump(ARRANGEMENT_SECONDS)
            await self.wait(lambda: proc.phase != "PLAYERS_ARRANGING", "the bell")
            if self.plan.violations:
                await self.attempt("player_arranged", {"seat": late}, "arranged after the bell")

    async def _thirteen_open_hands(self, proc: ThirteenProcedure) -> None:
        """Art. 8: each hand not late is opened against the banker's, and its cards are placed
        into rows as the player set them (Art. 7: one upside down is a foul)."""
        await self._place_banker(proc)
        for seat in proc.played_seats():
            if seat in proc.late or seat in proc.arrangements:
                continue
            if seat not in proc.opened_hands:
                await self.act("open_hand", {"seat": seat})
            cards = proc.seat_cards(seat)
            foul = seat == self._foul_seat
            rows = upside_down(cards, proc.rules) if foul else house_way(cards, proc.rules)
            await self.act("enter_arrangement", {"seat": seat, **rows_payload(rows)})
