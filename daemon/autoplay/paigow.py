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
            self._deal_tiles(proc)
            await self.act("confirm_deal")
        elif phase == "SETTING":
            await self._paigow_settings(proc)
        elif phase == "BANKER_SETTING":
            seat = proc.banker_seat
            await self.act("set_banker", good_setting(self._hands[int(seat or 0)]))
        elif phase == "OPENING":
            await self.act("open_hands")
        elif phase == "OPENED":
            for seat in list(proc.wrongly_set):
                await self.act("reset_hand", {"seat": seat, **good_setting(self._hands[seat])})
            await self.act("settle_round")
            if proc.resets:
                self.summary.hands["re-set by the croupier"] += len(proc.resets)
            self._settled = True
        elif phase == "ROUND_OVER":
            if proc.bank_rounds >= proc.bank_limit and self.rng.random() < 0.2:
                await self.act("extend_bank", {"consents": proc.played_seats()})
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
        await self.act("take_bank", {"player": player, "seat": self.rng.randrange(proc.hands)})

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
        if self.plan.violations:
            other = next(p for p in PLAYERS if p != banker)
            await self.attempt("shake_dice", {"player": other}, "dice shaken for the banker")
        await self.strike("shake")
        if self.proc.phase == "BETTING":
            await self.act("shake_dice", {"player": banker})

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

    async def _paigow_settings(self, proc: PaiGowProcedure) -> None:
        seats = [s for s in proc.played_seats() if s not in proc.settings]
        for seat in seats:
            tiles = self._hands[seat]
            setting = bad_setting(tiles) if self.plan.foul and seat == seats[0] else None
            await self.act("set_hand", {"seat": seat, **(setting or good_setting(tiles))})
