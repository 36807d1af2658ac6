"""`tabled diagram GAME [-o FILE]`: a game's procedure drawn from its own state machine.

The diagram is read from the `transitions` machine of a fresh procedure (its states and, for
each trigger, the transitions from each source with their conditions), never written by hand,
so what the approval documents show is what the table enforces. Formats: mermaid (the default,
and what `docs/procedures.md` embeds), Graphviz DOT, and SVG or PNG when Graphviz's `dot` is
installed. `--update-doc FILE` rewrites the diagram blocks of a Markdown file in place; a test
checks that `docs/procedures.md` is current.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from daemon.procedures.base import Procedure
from daemon.procedures.games import GAMES
from daemon.procedures.spec import Param


def procedure_of(game: str) -> type[Procedure]:
    """The procedure class the game declares (`Game.procedure`)."""
    cls = GAMES[game].procedure
    if cls is None:
        raise ValueError(f"{game} declares no procedure")
    return cls


FAULT_TRIGGERS = frozenset(
    {
        "fault_reported",
        "door_opened",
        "link_lost",
        "recovered",
        "device_healthy",
        "clear_hold",
        "clear_tilt",
        "hold_table",
        "replace_device",
        "void_round",
    }
)
FAULT_PHASES = ("HOLD", "TILT")
_BLOCK = re.compile(
    r"(<!-- diagram:(?P<game>\w+):(?P<view>\w+) -->\n)```mermaid\n.*?```\n(<!-- /diagram -->)",
    re.DOTALL,
)
_ACTIONS = re.compile(
    r"(<!-- actions:(?P<game>\w+) -->\n).*?(<!-- /actions -->)",
    re.DOTALL,
)
_PHASES = re.compile(
    r"(<!-- phases:(?P<game>\w+) -->\n).*?(<!-- /phases -->)",
    re.DOTALL,
)
_EVENTS = re.compile(
    r"(<!-- events:(?P<game>\w+) -->\n).*?(<!-- /events -->)",
    re.DOTALL,
)


def edges(game: str, faults: bool = True) -> list[tuple[str, str, str]]:
    """(source, dest, label) from the machine; labels join the triggers of one edge."""
    procedure = procedure_of(game)()
    machine = procedure.machine
    grouped: dict[tuple[str, str], list[str]] = {}
    for trigger, event in machine.events.items():
        if not faults and trigger in FAULT_TRIGGERS:
            continue
        for source, transitions in event.transitions.items():
            if not faults and source in FAULT_PHASES:
                continue
            for transition in transitions:
                guards = []
                for condition in transition.conditions:
                    func = condition.func
                    name = func if isinstance(func, str) else getattr(func, "__name__", "?")
                    guards.append(name if condition.target else f"not {name}")
                label = trigger + (f" [{', '.join(guards)}]" if guards else "")
                grouped.setdefault((source, transition.dest or source), []).append(label)
    return [(s, d, " | ".join(labels)) for (s, d), labels in grouped.items()]


def states(game: str, faults: bool = True) -> list[str]:
    names = list(procedure_of(game)().machine.states)
    return [n for n in names if faults or n not in FAULT_PHASES]


def mermaid(game: str, faults: bool = True) -> str:
    cls = procedure_of(game)
    lines = ["stateDiagram-v2", f"  [*] --> {cls.INITIAL.name}"]
    lines += [f"  {source} --> {dest}: {label}" for source, dest, label in edges(game, faults)]
    return "\n".join(lines) + "\n"


EVERY_PHASE = "__every_phase"
PHASE_HELD = "__phase_held"
_RESUME = re.compile(r"^(\w+) \[resumes_to_(\w+)\]$")


def portrait_edges(game: str) -> list[tuple[str, str, str]]:
    """The machine's edges with HOLD and TILT folded for a page: the triggers that reach them
    from every phase drawn once (from `EVERY_PHASE`), and each clear that resumes the phase held
    drawn once (to `PHASE_HELD`). Every other edge is drawn as the machine has it."""
    all_edges = edges(game)
    phases = [n for n in states(game) if n not in FAULT_PHASES]
    into: dict[str, dict[str, set[str]]] = {f: {} for f in FAULT_PHASES}
    for source, dest, label in all_edges:
        if dest in FAULT_PHASES and source not in FAULT_PHASES:
            into[dest][source] = set(label.split(" | "))
    common = {
        fault: set.intersection(*(by.get(p, set()) for p in phases)) if phases else set()
        for fault, by in into.items()
    }
    folded: list[tuple[str, str, str]] = []
    resumed: dict[str, list[str]] = {}
    for source, dest, label in all_edges:
        triggers = label.split(" | ")
        if dest in FAULT_PHASES and source not in FAULT_PHASES:
            triggers = [t for t in triggers if t not in common[dest]]
        elif source in FAULT_PHASES and dest not in FAULT_PHASES:
            kept = []
            for trigger in triggers:
                match = _RESUME.match(trigger)
                if match and match.group(2) == dest:
                    resumed.setdefault(source, [])
                    if match.group(1) not in resumed[source]:
                        resumed[source].append(match.group(1))
                else:
                    kept.append(trigger)
            triggers = kept
        if triggers:
            folded.append((source, dest, " | ".join(triggers)))
    for fault in FAULT_PHASES:
        if common.get(fault):
            folded.append((EVERY_PHASE, fault, " | ".join(sorted(common[fault]))))
        if resumed.get(fault):
            folded.append((fault, PHASE_HELD, " | ".join(resumed[fault])))
    return folded


def dot(game: str, faults: bool = True) -> str:
    """Graphviz source, drawn top to bottom to fit a portrait page: HOLD and TILT, reachable from
    every phase, are folded (`portrait_edges`)."""
    cls = procedure_of(game)
    lines = [
        f'digraph "{game}" {{',
        # A4 inside its margins, taller than wide (docs/procedures.md): the layout is stretched
        # to that aspect and scaled to fit the page.
        '  rankdir=TB; nodesep=0.25; ranksep=0.35; ratio=1.6; size="7.5,10.6";',
        '  node [shape=box, style="rounded", fontsize=11];',
        "  edge [fontsize=9];",
    ]
    lines += [f'  "{name}";' for name in states(game, faults)]
    lines.append(f'  "__start" [shape=point]; "__start" -> "{cls.INITIAL.name}";')
    drawn = portrait_edges(game) if faults else edges(game, faults)
    if faults:
        lines.append(f'  "{EVERY_PHASE}" [shape=plaintext, label="any phase"];')
        lines.append(f'  "{PHASE_HELD}" [shape=plaintext, label="back to the phase held"];')
        lines.append(f'  {{ rank=sink; "{PHASE_HELD}"; }}')
    for source, dest, label in drawn:
        escaped = label.replace('"', '\\"').replace(" | ", "\\n")
        lines.append(f'  "{source}" -> "{dest}" [label="{escaped}"];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def actions_table(game: str) -> str:
    """The game's actions as a Markdown table: who sends each, from which phases, which article."""
    cls = procedure_of(game)
    sources: dict[str, list[str]] = {}
    for phase, action in cls.transition_pairs():
        sources.setdefault(action, []).append(phase)
    order = [p.name for p in cls.Phase]
    lines = [
        "| action | role | phases | article | what it is | label | parameters |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, spec in cls.ACTIONS.items():
        phases = sorted(sources.get(name, []), key=order.index)
        shown = "every phase" if len(phases) == len(order) else ", ".join(phases)
        roles = ", ".join(sorted(spec.roles))
        label = f"{spec.label_en} / {spec.label_zh}" if spec.label_en else ""
        params = (
            "(a device's or the system's fact)"
            if spec.params is None
            else _params(spec.params) or "-"
        )
        lines.append(
            f"| `{name}` | {roles} | {shown} | {spec.article} | {spec.summary} | {label} "
            f"| {params} |"
        )
    return "\n".join(lines) + "\n"


def _params(params: Mapping[str, Param]) -> str:
    return ", ".join(f"`{name}` {describe(param)}" for name, param in params.items())


def describe(param: Param) -> str:
    """A parameter's kind and bounds in a few characters: `int 1..3`, `str ≤64`, `bool?`."""
    kind: str = param.kind
    if param.choices:
        kind = " or ".join(param.choices)
    elif param.minimum is not None or param.maximum is not None:
        low = "" if param.minimum is None else param.minimum
        high = "" if param.maximum is None else param.maximum
        kind += f" {low}..{high}"
    if param.min_length is not None and param.min_length == param.max_length:
        kind += f" ×{param.min_length}"
    elif param.max_length is not None:
        kind += f" ≤{param.max_length}"
    return kind + ("" if param.required else "?")


def phases_table(game: str) -> str:
    """What the dealer reads in each phase, in both languages (the console's hint line)."""
    lines = ["| phase | label | next |", "|---|---|---|"]
    for name, text in GAMES[game].phases.items():
        lines.append(
            f"| `{name}` | {text.label_en} / {text.label_zh} | {text.next_en} / {text.next_zh} |"
        )
    return "\n".join(lines) + "\n"


def events_table(game: str) -> str:
    """The journal events a table of the game writes, as declared (`Game.events`)."""
    lines = [
        "| event | label | phase after | closes the round | opens | journaled by |",
        "|---|---|---|---|---|---|",
    ]
    for name, event in GAMES[game].events.items():
        lines.append(
            f"| `{name}` | {event.label_en} / {event.label_zh} | {event.phase_after or '-'} "
            f"| {'yes' if event.closes_round else '-'} | {event.opens or '-'} | {event.by} |"
        )
    return "\n".join(lines) + "\n"


def update_doc(text: str) -> str:
    """The Markdown with each generated block (diagrams, phase, action and event tables)
    regenerated."""

    def diagram_block(match: re.Match[str]) -> str:
        game, view = match.group("game"), match.group("view")
        body = mermaid(game, faults=view == "full")
        return f"{match.group(1)}```mermaid\n{body}```\n{match.group(4)}"

    def actions_block(match: re.Match[str]) -> str:
        return f"{match.group(1)}{actions_table(match.group('game'))}{match.group(3)}"

    def phases_block(match: re.Match[str]) -> str:
        return f"{match.group(1)}{phases_table(match.group('game'))}{match.group(3)}"

    def events_block(match: re.Match[str]) -> str:
        return f"{match.group(1)}{events_table(match.group('game'))}{match.group(3)}"

    text = _EVENTS.sub(events_block, _PHASES.sub(phases_block, text))
    return _ACTIONS.sub(actions_block, _BLOCK.sub(diagram_block, text))


def render(game: str, fmt: str, faults: bool) -> bytes:
    if fmt == "mermaid":
        return mermaid(game, faults).encode()
    source = dot(game, faults)
    if fmt == "dot":
        return source.encode()
    program = shutil.which("dot")
    if program is None:
        raise RuntimeError(f"{fmt} needs Graphviz's `dot` on PATH; use mermaid or dot output")
    # 150 dpi: the page's 7.5 inches are 1125 pixels, enough for the labels to be read.
    resolution = ["-Gdpi=150"] if fmt == "png" else []
    result = subprocess.run(  # noqa: S603 - fixed argv: `dot` from PATH and a listed format
        [program, f"-T{fmt}", *resolution], input=source.encode(), capture_output=True, check=True
    )
    return result.stdout


def _format_for(path: str | None, asked: str | None) -> str:
    if asked:
        return asked
    suffix = Path(path).suffix.lower() if path else ""
    return {".svg": "svg", ".png": "png", ".dot": "dot", ".gv": "dot"}.get(suffix, "mermaid")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="tabled diagram", description="Draw a game's procedure from its state machine."
    )
    parser.add_argument("game", nargs="?", choices=sorted(GAMES))
    parser.add_argument("-o", "--output", help="write here (format from the suffix)")
    parser.add_argument("-f", "--format", choices=("mermaid", "dot", "svg", "png"))
    parser.add_argument(
        "--no-faults", action="store_true", help="leave out HOLD, TILT and their transitions"
    )
    parser.add_argument("--update-doc", metavar="FILE", help="regenerate a Markdown file's blocks")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    if args.update_doc:
        path = Path(args.update_doc)
        text = path.read_text(encoding="utf-8")
        path.write_text(update_doc(text), encoding="utf-8")
        return 0
    if args.game is None:
        parser.error("GAME is required (thirteen or paigow)")
    fmt = _format_for(args.output, args.format)
    try:
        data = render(args.game, fmt, faults=not args.no_faults)
    except (RuntimeError, subprocess.CalledProcessError) as exc:
        print(f"tabled diagram: {exc}", file=sys.stderr)
        return 1
    if args.output:
        Path(args.output).write_bytes(data)
    else:
        sys.stdout.write(data.decode())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
