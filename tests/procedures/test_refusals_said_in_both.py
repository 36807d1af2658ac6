"""Issue 23: every refusal a procedure can give is said in both of the dealer's languages. Each
`Refused(...)` under daemon/procedures carries a Chinese text (`zh=`) beside the English one,
read from the source, so a refusal no test reaches is held to it too (procedure_drive checks
each refusal the tests do reach: Chinese, and naming the same cards and tiles)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PROCEDURES = Path(__file__).resolve().parents[2] / "daemon" / "procedures"
CJK = re.compile("[\u3400-\u9fff]")


def _literal_text(node: ast.expr) -> str:
    """The literal parts of a string expression (an f-string's constants, both branches of a
    conditional)."""
    return "".join(
        part.value
        for part in ast.walk(node)
        if isinstance(part, ast.Constant) and isinstance(part.value, str)
    )


def test_every_refusal_in_the_procedures_has_its_chinese_beside_the_english() -> None:
    found, bare = 0, []
    for file in sorted(PROCEDURES.rglob("*.py")):
        tree = ast.parse(file.read_text(encoding="utf-8"), str(file))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Refused"):
                continue
            found += 1
            zh = next((k.value for k in node.keywords if k.arg == "zh"), None)
            if zh is None or not CJK.search(_literal_text(zh)):
                bare.append(f"{file.relative_to(PROCEDURES.parents[1])}:{node.lineno}")
    assert found > 100, f"only {found} refusals found: is this the procedures' source?"
    assert bare == [], bare
