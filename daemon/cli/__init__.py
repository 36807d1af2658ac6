"""`tabled`: one entry point, one subcommand per module.

Each subcommand lives in the module that owns the work and exposes ``main(argv) -> int``: the
table's own tools here (daemon/cli/: sim, devices, keys, status, act, journal, completion),
the others in their package (daemon.journal.cli, daemon.floor.cli...). The dispatcher imports
only the module of the subcommand asked for, not for speed: `tabled audit` needs numpy and scipy
(the analytics extra), which the table's approved build (requirements.lock) does not carry, and
every other command must run without them.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec, PathFinder
from types import ModuleType

from daemon import __version__

# name -> ("module" or "module:function", one-line help); the function defaults to `main`.
COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("daemon.run", "run one table: devices, procedure, journal, operator API"),
    "sim": ("daemon.cli.sim", "start simulated devices on pseudo-terminals"),
    "devices": (
        "daemon.cli.devices",
        "connect to each configured device and show its identity and link",
    ),
    "verify-log": ("daemon.journal.cli", "check a journal's hash chain"),
    "diagram": ("daemon.procedures.diagram", "draw a game's procedure state diagram"),
    "rules": ("daemon.rules.cli", "the rules engine for labs: JSON lines in, JSON lines out"),
    "trace": ("daemon.trace.cli", "each article: its text, guards, tests and status"),
    "status": (
        "daemon.cli.status",
        "the table now: phase, seats, dice, timer, legal actions",
    ),
    "act": ("daemon.cli.act", "ask the table to take a step, as the token's holder"),
    "journal": ("daemon.cli.journal", "journal events by round, event or time; --follow"),
    "feed": ("daemon.shipper.cli", "the journal shipped to NATS JetStream: status, ship, replay"),
    "floor": (
        "daemon.floor.cli",
        "the casino floor: every table's journal from JetStream into PostgreSQL, checked",
    ),
    "keys": ("daemon.cli.keys", "the table's signing key: init, show (fingerprint, key), rotate"),
    "audit": (
        "daemon.analytics.cli",
        "integrity audit of a journal: dice, shuffles, shoe reader, hold (needs numpy, scipy)",
    ),
    "token": (
        "daemon.api.tokens",
        "make an API token for a person: prints it once, stores its hash",
    ),
    "completion": (
        "daemon.cli.completion",
        "a bash or zsh completion script: source <(tabled completion bash)",
    ),
}


def _usage() -> str:
    width = max(len(name) for name in COMMANDS)
    lines = ["usage: tabled COMMAND [ARGS...]", "", "commands:"]
    lines += [f"  {name.ljust(width)}  {help_}" for name, (_, help_) in COMMANDS.items()]
    lines += ["", "`tabled COMMAND --help` describes a command's arguments."]
    return "\n".join(lines)


# Imported by structlog when installed, absent from the approved build (requirements.lock).
_NOT_IN_THE_BUILD = ("rich", "greenlet")


def _structlog_without_rich() -> None:
    """Have structlog imported as the approved build has it: without `rich` (nor `greenlet`).

    structlog imports rich, when it is installed, for its console renderer and its tracebacks
    (about 50 modules, a sixth of `tabled run`'s start-up CPU), and greenlet for a context of
    each green thread (the daemon has none). The approved build has neither
    (requirements.lock; the daemon renders plain tracebacks either way, daemon/logging.py),
    but a development venv does (the test tools need them): hidden while structlog is imported,
    by whichever command imports it, so the daemon starts the same in both. A command that
    does not log (`tabled rules`, `tabled status`) does not import structlog at all.
    """
    if "structlog" not in sys.modules and "rich" not in sys.modules:
        sys.meta_path.insert(0, _StructlogWithoutRich())


class _StructlogWithoutRich:
    """A meta path finder for one import, structlog's: rich and greenlet are hidden while its
    module runs (structlog's own submodules, which look for them, are imported from it)."""

    def find_spec(
        self, name: str, path: Sequence[str] | None = None, target: object = None
    ) -> ModuleSpec | None:
        if name != "structlog":
            return None
        sys.meta_path.remove(self)
        spec = PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module: ModuleType) -> None:
            hidden = [absent for absent in _NOT_IN_THE_BUILD if absent not in sys.modules]
            for absent in hidden:
                sys.modules[absent] = None  # type: ignore[assignment] # import it: ImportError
            try:
                run(module)
            finally:
                for absent in hidden:
                    if absent in sys.modules and sys.modules[absent] is None:
                        del sys.modules[absent]

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def main(argv: Sequence[str] | None = None) -> int:
    _structlog_without_rich()
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        # No command is a mistake, not a question: the help on stderr, and the usage status.
        print(_usage(), file=sys.stderr)
        return 2
    if args[0] in {"-h", "--help", "help"}:
        print(_usage())
        return 0
    if args[0] == "--version":
        print(f"tabled {__version__}")
        return 0
    name, rest = args[0], args[1:]
    if name not in COMMANDS:
        print(f"tabled: unknown command {name!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    module_name, _, function = COMMANDS[name][0].partition(":")
    result: int = getattr(importlib.import_module(module_name), function or "main")(rest)
    return result


if __name__ == "__main__":
    raise SystemExit(main())
