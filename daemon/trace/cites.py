"""Citations as the code and the violations write them, read back into canonical form.

A canonical citation names one article or paragraph: ``Portaria 51/89/M Art. 2(a)``,
``Portaria 15/90/M Art. 5(3)``, ``Portaria 51/89/M Art. 9 II``, ``Portaria 15/90/M Table II``.
Text may group several (``Art. 7-11``, ``Art. 2(2)(3)``, ``Art. 6(1)-(2)``,
``Art. 5(3), 6(3), 8``); `find_citations` expands them. A mention without its regulation
(``Art. 6(2)`` in a Pai Gow module) takes the regulation the caller gives as the default.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

THIRTEEN = "Portaria 51/89/M"
PAIGOW = "Portaria 15/90/M"
HK = "003"
# The short names a test marker uses (`@pytest.mark.article("51/89/M", "2(a)")`).
REGULATIONS = {"51/89/M": THIRTEEN, "15/90/M": PAIGOW, "003": HK}
GAME_OF = {THIRTEEN: "thirteen", PAIGOW: "paigow", HK: "thirteen"}

_REF = r"\d+(?:\s+[IV]+\b(?:\.\d+)?|(?:\([0-9a-z]\))+)?(?:\s*-\s*(?:\d+\b|\([0-9a-z]\)))?"
_CITE = re.compile(
    r"(?:(?:Portaria\s+)?(?P<reg>51/89/M|15/90/M)\s+|(?P<seed>00[02])\s+|(?P<game>Thirteen)\s+)?"
    r"(?<![A-Za-z])[Aa]rt\.\s*(?P<refs>" + _REF + r"(?:\s*(?:,|\band\b)\s*" + _REF + r")*)"
    r"|(?:(?:Portaria\s+)?(?P<treg>15/90/M)\s+)?\bTable\s+(?P<table>II|I)\b"
)
_ONE = re.compile(
    r"(?P<num>\d+)(?:\s+(?P<roman>[IV]+(?:\.\d+)?)|(?P<parens>(?:\([0-9a-z]\))+))?"
    r"(?:\s*-\s*(?P<upto>\d+|\([0-9a-z]\)))?"
)
_SEEDS = {"000": THIRTEEN, "002": PAIGOW}


def canonical(regulation: str, paragraph: str) -> str:
    """``("15/90/M", "5(3)")`` -> ``Portaria 15/90/M Art. 5(3)``; tables, 003 clauses as named."""
    full = REGULATIONS.get(regulation, regulation)
    if full == HK or paragraph.startswith("Table "):
        return f"{full} {paragraph}"
    return f"{full} Art. {paragraph}"


def _expand(ref: str) -> list[str]:
    match = _ONE.fullmatch(ref.strip())
    if match is None:
        return []
    num, roman, parens, upto = match.group("num", "roman", "parens", "upto")
    if roman:
        return [f"{num} {roman}"]
    subs = re.findall(r"\(([0-9a-z])\)", parens or "")
    if upto is not None and upto.startswith("(") and subs:
        last = upto.strip("()")
        subs = subs[:-1] + [chr(c) for c in range(ord(subs[-1]), ord(last) + 1)]
    elif upto is not None and not subs and int(upto) > int(num):
        return [str(n) for n in range(int(num), int(upto) + 1)]
    if subs:
        return [f"{num}({sub})" for sub in subs]
    return [num]


def find_citations(text: str, default: str | None = None) -> Iterator[str]:
    """Each article or paragraph `text` cites, canonical; `default` is the regulation of a
    mention that names none (a mention with neither is skipped)."""
    for match in _CITE.finditer(text):
        if match.group("table"):
            regulation = match.group("treg") or default
            if regulation is not None:
                yield canonical(regulation, f"Table {match.group('table')}")
            continue
        if match.group("reg"):
            regulation = REGULATIONS[match.group("reg")]
        elif match.group("seed"):
            regulation = _SEEDS[match.group("seed")]
        elif match.group("game"):
            regulation = THIRTEEN
        elif default is not None:
            regulation = default
        else:
            continue
        for ref in re.split(r"\s*(?:,|\band\b)\s*", match.group("refs")):
            for paragraph in _expand(ref):
                yield canonical(regulation, paragraph)


def covers(entry: str, cited: str) -> bool:
    """Whether a guard citing `cited` enforces the catalogue entry `entry`: the same
    citation, or a finer one inside it (``Art. 9 II.6`` is inside ``Art. 9 II``)."""
    return cited == entry or any(cited.startswith(entry + sep) for sep in (".", "(", " "))
