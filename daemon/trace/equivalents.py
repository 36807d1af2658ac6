"""The mutants of the proof no test can kill, each with the reason a person can check.

A mutant is **equivalent** when its edit changes nothing any sequence of inputs can reach: a
check that re-reads a state no accepted input can change in between, or a guard another refuses
the same case before (it is redundant where it stands). The proof does not run it: it lists
the guard as not mutated for that article, with this reason (`tabled trace --prove`, and
docs/traceability.md lists them all). Each entry names an article and one of its guards as the
trace finds them; tests/trace fails on an entry that names none (a guard renamed or gone).

Nothing else goes here: a guard whose mutant survives and is not equivalent needs a test.
"""

from __future__ import annotations

MARK = "equivalent mutant: "  # how the proof's reason for leaving one unmutated begins

EQUIVALENT: dict[tuple[str, str], str] = {
    (
        "Portaria 51/89/M Art. 4",
        "daemon.procedures.thirteen.procedure:ThirteenProcedure._check_override",
    ): "It re-checks, at the approval, that the card proposed for a misread is still the one "
    "due and not dealt. `_check_propose_card` checked both when it was proposed, and nothing "
    "can deal a card while the proposal waits: the reader's cards are refused then (Art. 4, "
    "`_check_card_read`), a void of the deal is refused until the proposal is decided, and a "
    "void of the round clears the proposal with the round.",
    (
        "Portaria 51/89/M Art. 8",
        "daemon.procedures.thirteen.procedure:ThirteenProcedure._check_override",
    ): "It re-checks, at the approval, that the placed hand a supervisor proposed to correct "
    "is still placed as it was. Nothing can place it otherwise while the proposal waits: a "
    "placed hand is final (`_check_enter_arrangement` refuses it), one proposal waits at a "
    "time (`_check_correct_arrangement` refuses a second), and a void of the round clears the "
    "proposal with the round.",
    (
        "Portaria 51/89/M Art. 2(d)",
        "daemon.rules.thirteen.settlement:LATE",
    ): "The rank of each row of a hand late at the bell is never compared, so its value (-1, "
    "or the proof's 0, or any) cannot change a settlement: a late side is a foul (`_side` "
    "returns it fouled), and a foul decides every row before ranks compare (`_row_results` "
    "gives the row to the other side, or both fouled follow `both_foul`); `_compare` runs "
    "only when neither side fouled. Nothing else reads it: `tabled rules rank` ranks cards a "
    "request gives, never a late hand. The late hand's loss itself is proven by its tests "
    "(`test_a_hand_late_at_the_bell_loses_every_row_to_every_other_seat`).",
}
