"""`tabled act ACTION --help`: one action as the game declares it (daemon/procedures/spec.py,
each game's `game.py`): what it is, who takes it, in which phases, the article, and each
parameter with its kind, bounds and label, the same declarations the table checks a request by.
"""

from __future__ import annotations

from daemon.procedures.diagram import describe, procedure_of
from daemon.procedures.games import GAMES


def action_help(name: str) -> str | None:
    """The help of the operator action `name` in each game that has it; None if none does."""
    blocks = []
    for game in GAMES.values():
        action = game.actions.get(name)
        if action is None or not action.operator or action.params is None:
            continue
        phases = [p for p, a in procedure_of(game.name).transition_pairs() if a == name]
        order = list(game.phases)
        phases.sort(key=lambda p: order.index(p) if p in order else len(order))
        lines = [
            f"{game.name} ({game.regulation}): {name}: {action.label_en} / {action.label_zh}",
            f"  {action.summary}; {action.article}",
            f"  taken by: {', '.join(sorted(action.roles))}",
            f"  legal in: {', '.join(phases) if len(phases) < len(order) else 'every phase'}",
        ]
        if action.params:
            lines.append("  parameters (key=value; `?` optional):")
            width = max(len(k) for k in action.params)
            for key, param in action.params.items():
                label = f"{param.label_en} / {param.label_zh}" if param.label_en else ""
                cited = f" ({param.article})" if param.article else ""
                lines.append(f"    {key:<{width}}  {describe(param):<22} {label}{cited}".rstrip())
        else:
            lines.append("  parameters: none")
        if action.requires_reason:
            lines.append("  --reason TEXT is required (journaled with the step)")
        example = [f"{k}=…" for k, p in (action.params or {}).items() if p.required]
        example += ["--reason '…'"] if action.requires_reason else []
        lines.append("  e.g. " + " ".join(["tabled act", name, *example]))
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) or None
