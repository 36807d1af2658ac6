"""`tabled completion bash|zsh`: a shell completion script for `tabled`, made from the commands'
own argument parsers, so it offers exactly what each command takes.

    source <(tabled completion bash)                 # this shell; or, for every shell:
    tabled completion bash > /etc/bash_completion.d/tabled
    tabled completion zsh > "${fpath[1]}/_tabled"    # zsh (through its bashcompinit)

Each command's parser is found by calling its `main(["--help"])` with `parse_args` replaced by
one that hands the parser back instead of parsing (nothing runs past it). What is completed:
the commands, each command's options and subcommands (`tabled feed status`, `tabled floor
report`), the values an option or a positional takes when it has a fixed set (`--log-level`,
`tabled diagram thirteen`), and file names elsewhere (`--config`, `--journal`).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import shlex
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

from daemon.cli import COMMANDS
from daemon.floor.cli import SUBCOMMANDS as FLOOR
from daemon.rules.cli import GAMES as RULES


@dataclass
class Node:
    """What may follow `tabled PATH`: options, words (subcommands or a positional's choices),
    and each option's fixed values."""

    options: list[str] = field(default_factory=list)
    words: list[str] = field(default_factory=list)
    values: dict[str, list[str]] = field(default_factory=dict)


class _Captured(Exception):
    def __init__(self, parser: argparse.ArgumentParser) -> None:
        super().__init__()
        self.parser = parser


def _function(target: str) -> Callable[[list[str]], Any]:
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name or "main")  # type: ignore[no-any-return]


def parser_of(target: str) -> argparse.ArgumentParser | None:
    """The parser `module:function` builds for its arguments, or None if it uses none."""
    parse_args, parse_known = (
        argparse.ArgumentParser.parse_args,
        argparse.ArgumentParser.parse_known_args,
    )

    def capture(self: argparse.ArgumentParser, *_args: Any, **_kwargs: Any) -> NoReturn:
        raise _Captured(self)

    argparse.ArgumentParser.parse_args = capture  # type: ignore[method-assign]
    argparse.ArgumentParser.parse_known_args = capture  # type: ignore[method-assign]
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            _function(target)(["--help"])
    except _Captured as captured:
        return captured.parser
    except (SystemExit, Exception):
        return None
    finally:
        argparse.ArgumentParser.parse_args = parse_args  # type: ignore[method-assign]
        argparse.ArgumentParser.parse_known_args = parse_known  # type: ignore[method-assign]
    return None


def _add(tree: dict[str, Node], path: str, parser: argparse.ArgumentParser | None) -> Node:
    node = tree.setdefault(path, Node())
    if parser is None:
        return node
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                node.words.append(name)
                _add(tree, f"{path} {name}", sub)
        elif action.option_strings:
            node.options += action.option_strings
            if action.choices is not None:
                node.values.update(
                    (o, [str(c) for c in action.choices]) for o in action.option_strings
                )
        elif action.choices is not None and not node.words:
            node.words += [str(c) for c in action.choices]  # the first positional's fixed values
    return node


def tree() -> dict[str, Node]:
    """Every command's node, keyed `tabled`, `tabled feed`, `tabled feed status`..."""
    nodes: dict[str, Node] = {"tabled": Node(options=["--help", "--version"])}
    # Commands that dispatch on their first word before any parser: their words, their parsers.
    dispatched = {"floor": FLOOR, "rules": {g: f"{m}:main" for g, m in RULES.items()}}
    for name, (target, _help) in COMMANDS.items():
        nodes["tabled"].words.append(name)
        node = _add(nodes, f"tabled {name}", parser_of(target))
        for word, sub in dispatched.get(name, {}).items():
            node.words.append(word)
            _add(nodes, f"tabled {name} {word}", parser_of(sub))
    return nodes


def _array(name: str, entries: dict[str, str]) -> str:
    body = "".join(f"    [{shlex.quote(k)}]={shlex.quote(v)}\n" for k, v in entries.items())
    return f"declare -gA {name}=(\n{body})\n"


BASH_FUNCTION = r"""
_tabled() {
    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}"
    # `at`, not `path`: zsh's `path` is its PATH array, even under bashcompinit; and a key
    # unquoted in `${map[...]}`: zsh takes quotes there as part of the key.
    local at=tabled word i positional=0
    for ((i = 1; i < COMP_CWORD; i++)); do
        word="${COMP_WORDS[i]}"
        [[ "$word" == -* ]] && continue
        if [[ -n "${_tabled_opts[$at $word]+set}" ]]; then
            at="$at $word"
            positional=0
        elif [[ " ${_tabled_words[$at]} " == *" $word "* ]]; then
            positional=1
        fi
    done
    if [[ -n "${_tabled_values[$at $prev]+set}" ]]; then
        COMPREPLY=($(compgen -W "${_tabled_values[$at $prev]}" -- "$cur"))
    elif [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "${_tabled_opts[$at]}" -- "$cur"))
    elif [[ $positional == 0 && -n "${_tabled_words[$at]}" ]]; then
        COMPREPLY=($(compgen -W "${_tabled_words[$at]}" -- "$cur"))
    else
        COMPREPLY=()  # -o default: file names
    fi
}
complete -o default -F _tabled tabled
"""


def bash_script(nodes: dict[str, Node]) -> str:
    opts = {path: " ".join(node.options) for path, node in nodes.items()}
    words = {path: " ".join(node.words) for path, node in nodes.items() if node.words}
    values = {
        f"{path} {option}": " ".join(choices)
        for path, node in nodes.items()
        for option, choices in node.values.items()
    }
    return (
        "# bash completion for tabled (made by `tabled completion bash`)\n"
        + _array("_tabled_opts", opts)
        + _array("_tabled_words", words)
        + _array("_tabled_values", values)
        + BASH_FUNCTION
    )


# Autoloaded from `fpath` as `_tabled` (the file's `#compdef`), the script runs at the first
# TAB: it defines the function and registers it, then completes that TAB too.
ZSH_FIRST_TAB = "if [[ -n ${compstate-} ]]; then _bash_complete -o default -F _tabled; fi\n"


def zsh_script(nodes: dict[str, Node]) -> str:
    return (
        "#compdef tabled\n# zsh completion for tabled (made by `tabled completion zsh`): the bash "
        "script through zsh's bashcompinit\nautoload -U +X bashcompinit && bashcompinit\n"
        + bash_script(nodes)
        + ZSH_FIRST_TAB
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="tabled completion",
        description="print a shell completion script: source <(tabled completion bash)",
    )
    parser.add_argument("shell", choices=("bash", "zsh"))
    args = parser.parse_args(argv)
    nodes = tree()
    sys.stdout.write(bash_script(nodes) if args.shell == "bash" else zsh_script(nodes))
    return 0
