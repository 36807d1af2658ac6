"""`tabled audit report`: every audit of a journal in one HTML page (and a PDF), with the pictures
people would rather look at than read: each shaker's face histogram with its expected band, each
shuffler's card x position heat map and rising sequences against a random deck's, each reader's
misread rate by dealer, and the hold's z per shift as a control chart.

matplotlib draws them (the Agg backend: no display); the HTML carries them as data URIs, so the
page is one file that can be mailed or archived beside the journal.
"""

from __future__ import annotations

import base64
import html
import io
import textwrap
from collections.abc import Iterator
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.backends.backend_pdf import PdfPages
from matplotlib.figure import Figure

from daemon.analytics.common import Finding
from daemon.analytics.dice import face_band
from daemon.analytics.shuffle import (
    CARDS,
    permutations,
    position_table,
    random_rising_distribution,
    rising_sequences,
)
from daemon.analytics.source import AuditData

TITLES = {
    "dice": "Dice shakers",
    "shuffle": "Shufflers",
    "reader": "Shoe readers",
    "hold": "Hold against theory",
}


def dice_figure(serial: str, throws: np.ndarray) -> Figure:
    figure, axes = plt.subplots(figsize=(7, 3.6))
    counts = np.bincount(throws.ravel(), minlength=7)[1:]
    n = int(throws.size)
    expected, low, high = face_band(n)
    axes.axhspan(low, high, color="#9c9", alpha=0.35, label="99% band of fair dice", zorder=0)
    axes.axhline(expected, color="#363", linewidth=1, zorder=1)
    axes.bar(np.arange(1, 7), counts, color="#4a78a8", zorder=2, width=0.6)
    axes.set_xlabel("face")
    axes.set_ylabel("count")
    axes.set_title(f"{serial}: faces of {n:,} dice")
    axes.legend(loc="upper left")
    figure.tight_layout()
    return figure


def shuffle_figures(serial: str, decks: np.ndarray) -> list[Figure]:
    figures = []
    figure, axes = plt.subplots(figsize=(6, 5.2))
    table = position_table(decks) / (len(decks) / CARDS)
    image = axes.imshow(table, cmap="RdBu_r", vmin=0, vmax=2, origin="upper")
    axes.set_xlabel("position dealt")
    axes.set_ylabel("position in (previous deck as dealt)")
    axes.set_title(f"{serial}: card x position, count / expected ({len(decks):,} decks)")
    figure.colorbar(image, ax=axes, fraction=0.046)
    figure.tight_layout()
    figures.append(figure)
    figure, axes = plt.subplots(figsize=(7, 3.6))
    rising = rising_sequences(decks)
    r, p = random_rising_distribution()
    bins = [k + 0.5 for k in range(CARDS + 1)]
    axes.hist(rising, bins=bins, density=True, color="#4a78a8", label="this shuffler")
    axes.plot(r, p, color="#c33", label="a random deck")
    axes.set_xlim(0, CARDS + 1)
    axes.set_xlabel("rising sequences a deck")
    axes.set_title(f"{serial}: rising sequences (mean {rising.mean():.2f}, random 26.50)")
    axes.legend()
    figure.tight_layout()
    figures.append(figure)
    return figures


def reader_figure(finding: Finding) -> Figure:
    rows = finding.extra["by_dealer"]
    figure, axes = plt.subplots(figsize=(7, 3.6))
    names = [row["dealer"] for row in rows]
    rates = [row["misread_rate"] for row in rows]
    errors = [
        [r - row["misread_ci95"][0] for r, row in zip(rates, rows, strict=True)],
        [row["misread_ci95"][1] - r for r, row in zip(rates, rows, strict=True)],
    ]
    axes.bar(names, rates, yerr=errors, color="#4a78a8", capsize=4)
    axes.axhline(finding.extra["limit"], color="#c33", label="accepted limit")
    axes.set_ylabel("misreads / card")
    axes.set_title(f"{finding.subject}: misread rate by dealer (95% CI)")
    axes.legend()
    figure.tight_layout()
    return figure


def hold_figure(findings: list[Finding]) -> Figure:
    figure, axes = plt.subplots(figsize=(8, 3.6))
    labels = [f.subject.split(" ", 1)[1] for f in findings]
    z = [f.statistic for f in findings]
    colours = ["#c33" if f.flagged else "#4a78a8" for f in findings]
    axes.plot(range(len(z)), z, color="#888", linewidth=1)
    axes.scatter(range(len(z)), z, c=colours, zorder=3)
    for limit in (-3, 3):
        axes.axhline(limit, color="#c33", linestyle="--", linewidth=1)
    axes.axhline(0, color="#363", linewidth=1)
    axes.set_xticks(range(len(z)), labels, rotation=45, ha="right", fontsize=7)
    axes.set_ylabel("z of the hold")
    axes.set_title("Hold against the rule set, z by group (alert beyond ±3)")
    figure.tight_layout()
    return figure


def figures_for(kind: str, data: AuditData, findings: list[Finding]) -> Iterator[Figure]:
    if kind == "dice":
        for serial in sorted(data.dice):
            yield dice_figure(serial, data.throws(serial))
    elif kind == "shuffle":
        for serial in sorted(data.deck_outputs):
            inputs, outputs = data.decks(serial)
            if len(outputs):
                yield from shuffle_figures(serial, permutations(inputs, outputs))
    elif kind == "reader":
        for finding in findings:
            if finding.extra.get("by_dealer"):
                yield reader_figure(finding)
    elif findings:
        yield hold_figure(findings)


def _png(figure: Figure) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110)
    return base64.b64encode(buffer.getvalue()).decode()


def write(
    source: str, data: AuditData, sections: dict[str, list[Finding]], out: Path
) -> list[Path]:
    """The HTML page at `out` and the PDF beside it (same name, .pdf); the paths written."""
    pdf_path = out.with_suffix(".pdf")
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>Integrity audit: {html.escape(source)}</title>",
        "<style>body{font:14px system-ui,sans-serif;max-width:960px;margin:2em auto}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;"
        "vertical-align:top}.flagged{color:#b00;font-weight:bold}img{max-width:100%}</style>",
        f"</head><body><h1>Integrity audit</h1><p>{html.escape(source)}; "
        "tests and their measured power: docs/integrity.md</p>",
    ]
    with PdfPages(pdf_path) as pdf:
        for kind, findings in sections.items():
            parts.append(f"<h2>{TITLES[kind]}</h2>")
            text = [TITLES[kind]]
            if not findings:
                parts.append("<p>Nothing to audit.</p>")
            parts.append("<table><tr><th>serial / group</th><th>verdict</th><th>power</th></tr>")
            for f in findings:
                css = "flagged" if f.flagged else ""
                parts.append(
                    f"<tr><td class='{css}'>{html.escape(f.subject)}<br>"
                    f"{'FLAGGED' if f.flagged else 'ok'}</td>"
                    f"<td>{html.escape(f.verdict)}<br><small>statistic {f.statistic:.4g}, "
                    f"p = {f.p_value:.3g}</small></td><td><small>{html.escape(f.power)}</small>"
                    "</td></tr>"
                )
                text.append(f"{f.subject}: {f.verdict}")
            parts.append("</table>")
            page = plt.figure(figsize=(8.27, 11.69))
            page.text(0.05, 0.95, "\n\n".join(_wrap(t) for t in text), va="top", fontsize=8)
            pdf.savefig(page)
            plt.close(page)
            for figure in figures_for(kind, data, findings):
                parts.append(f"<p><img src='data:image/png;base64,{_png(figure)}'></p>")
                pdf.savefig(figure)
                plt.close(figure)
        parts.append("</body></html>")
    out.write_text("\n".join(parts), encoding="utf-8")
    return [out, pdf_path]


def _wrap(text: str, width: int = 110) -> str:
    return "\n".join(textwrap.wrap(text, width))
