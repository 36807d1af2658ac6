"""The scripted dealer of a Pai Gow round, with its banker, players' bets and settings."""

from __future__ import annotations

from daemon.autoplay.base import PLAYERS, AutoplayError
from daemon.autoplay.faults import FaultInjection
from daemon.autoplay.players import bad_setting, good_setting
from daemon.procedures.paigow import PaiGowProcedure
from daemon.rules import paigow


class PaiGowDealer(FaultInjection):
    async def _paigow_step(self, phase: str) -> None:
        proc: PaiGowProcedure = self.proc
        if phase == "EQUIPMENT_CHECK":
            await self.wait(
                lambda: all(d in proc.identified for d in proc.devices), "devices identified"
            )
            await self.act("open_table")
        elif phase == "BANK_OFFER":
            await self._paigow_bank(proc)
        elif phase == "SHUFFLE":
            tiles = [str(t) for t in paigow.TILE_SET]
            self.rng.shuffle(tiles)
            self._tiles, self._tile_cursor = tiles, 0
            await self.act("confirm_tile_shuffle", {"new_set": self.rng.random() < 0.05})
        elif phase == "BETTING":
            await self._paigow_bets(proc)
        elif phase == "SHAKING":
            await self.wait(lambda: proc.phase != "SHAKING", "the dice")
        elif phase == "DEALING":
            if self.plan.violations and proc.bets:
                bet = proc.bets[0]
                await self.attempt(
                    "place_bet",
                    {"player": bet["player"], "seat": bet["seat"], "amount": bet["amount"] * 2},
                    "bet raised after the shake",
                )
            await self._paigow_deal(proc)
        elif phase == "SETTING":
            # Art. 6(1): each door sets face down; the tiles wait for the croupier to open them.
            for seat in [s for s in proc.played_seats() if s not in proc.set_seats]:
                await self.act("set_hand", {"seat": seat})
        elif phase == "BANKER_SETTING":
            await self.act("set_banker")
        elif phase == "OPENING":
            await self._paigow_open(proc)
        elif phase == "OPENED":
            for seat in list(proc.wrongly_set):
                await self.act("reset_hand", {"seat": seat, **good_setting(self._hands[seat])})
            await self.act("settle_round")
            if proc.resets:
                self.summary.hands["re-set by the croupier"] += len(proc.resets)
            self._settled = True
        elif phase == "ROUND_OVER":
            if proc.bank_rounds >= proc.bank_limit and self.rng.random() < 0.2:
                guests = sorted({str(b["player"]) for b in proc.bets})
                await self.act("extend_bank", {"consents": guests})
            await self.act("next_round")
        else:
            raise AutoplayError(f"no script for phase {phase}")

    async def _paigow_bank(self, proc: PaiGowProcedure) -> None:
        candidates = [p for p in PLAYERS if p != proc.last_banker]
        if proc.bettors_seen and self.rng.random() < 0.3:
            await self.act("decline_bank", {"player": self.rng.choice(candidates)})
        if proc.declined:
            candidates = [p for p in candidates if p in proc.bettors_seen] or candidates
        player = self.rng.choice(candidates)
        # Art. 5(1)(2): the door whose turn it is (any door for the table's first bank).
        door = proc.bank_door
        seat = self.rng.randrange(proc.hands) if door is None else door
        await self.act("take_bank", {"player": player, "seat": seat})

    async def _paigow_bets(self, proc: PaiGowProcedure) -> None:
        banker = str(proc.banker)
        if not proc.stack_moves:
            await self.strike("betting")
            if self.proc.phase != "BETTING":
                return
            movers = self.rng.sample([p for p in PLAYERS if p != banker], 2)
            await self.act("move_stacks", {"by": "player", "player": movers[0], "one_hand": True})
            await self.act("move_stacks", {"by": "banker", "player": banker, "one_hand": True})
            if self.plan.violations:
                await self.attempt(
                    "move_stacks",
                    {"by": "player", "player": movers[1], "one_hand": True},
                    "stacks moved after the banker",
                )
        if not proc.bets:
            doors = [s for s in range(proc.hands) if s != proc.banker_seat]
            for player in self.rng.sample([p for p in PLAYERS if p != banker], 3):
                bet = {
                    "player": player,
                    "seat": self.rng.choice(doors),
                    "amount": self.rng.choice((100, 200, 500)),
                }
                await self.act("place_bet", bet)
        if proc.stake is None:
            if self.plan.violations and proc.min_stake > 1:
                await self.attempt(
                    "place_stake", {"amount": proc.min_stake - 1}, "stake below the carried stake"
                )
            stake = max(proc.min_stake, self.rng.choice((1000, 2000, 5000)))
            await self.act("place_stake", {"amount": stake})
        if not proc.co_bankers and self.rng.random() < 0.2:
            # Art. 5(5): a guest who bets on no door, or the house, joins the bank.
            idle = [p for p in PLAYERS if p != banker and all(b["player"] != p for b in proc.bets)]
            house = self.rng.random() < 0.5 and paigow.ruleset(proc.ruleset).house_co_banks
            await self.act(
                "co_bank",
                {
                    "player": "house" if house or not idle else self.rng.choice(idle),
                    "amount": self.rng.choice((500, 1000)),
                    "house": house or not idle,
                },
            )
        if not proc.head_out:
            if self.plan.violations:
                await self.attempt("shake_dice", {"player": banker}, "dice before the head tiles")
            await self.act("head_tiles_out")
        if self.plan.violations:
            other = next(p for p in PLAYERS if p != banker)
            await self.attempt("shake_dice", {"player": other}, "dice shaken for the banker")
        await self.strike("shake")
        if self.proc.phase == "BETTING":
            await self.act("shake_dice", {"player": banker})

    async def _paigow_deal(self, proc: PaiGowProcedure) -> None:
        if not proc.dealt:
            self._deal_tiles(proc)
        order = proc.deal_order()
        if self.plan.violations and not proc.dealt:
            await self.attempt("deal_hand", {"seat": order[1]}, "a door dealt out of turn")
        for seat in order[len(proc.dealt) :]:
            if self.rng.random() < 0.05:
                # Art. 4: a tile turned face up while dealing stays valid.
                tile = self.rng.choice(self._hands[seat])
                await self.act("tile_face_up", {"seat": seat, "tile": tile})
            await self.act("deal_hand", {"seat": seat})

    async def _paigow_open(self, proc: PaiGowProcedure) -> None:
        doors = proc.door_seats()
        for seat in [s for s in proc.opening_order() if s not in proc.settings]:
            tiles = self._hands[seat]
            # A foul round: the first door sets wrongly, and half the time the banker too (the
            # rule set decides whether the croupier re-sets it, Art. 6(2)).
            wrong = seat == doors[0] or (seat == proc.banker_seat and self.rng.random() < 0.5)
            setting = bad_setting(tiles) if self.plan.foul and wrong else None
            await self.act("open_hand", {"seat": seat, **(setting or good_setting(tiles))})

    def _deal_tiles(self, proc: PaiGowProcedure) -> None:
        if len(self._tiles) - self._tile_cursor < 4 * proc.hands:
            # Kept tiles were lost to a voided round: a fresh stack, as a new shuffle would.
            self._tiles = [str(t) for t in paigow.TILE_SET]
            self.rng.shuffle(self._tiles)
            self._tile_cursor = 0
        self._hands = {}
        for seat in range(proc.hands):
            at = self._tile_cursor
            self._hands[seat] = self._tiles[at : at + 4]
            self._tile_cursor += 4
        if self._tile_cursor >= len(self._tiles):
            self._tile_cursor = 0
