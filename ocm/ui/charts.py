"""Pictures drawn on the server as SVG (no script, nothing fetched): bars per day stacked by
tool, and horizontal bars stacked by status. Every label is escaped."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from datetime import date
from html import escape

from markupsafe import Markup

# Colour-blind-safe palette (Okabe-Ito), cycled.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442",
           "#999999")
STATUS_COLOURS = {"active": "#009E73", "open": "#0072B2", "frozen": "#56B4E9",
                  "closed": "#999999", "resolved": "#0072B2", "superseded": "#E69F00",
                  "archived": "#999999"}


def colours(names: Iterable[str]) -> dict[str, str]:
    return {name: STATUS_COLOURS.get(name) or PALETTE[i % len(PALETTE)]
            for i, name in enumerate(sorted(set(names)))}


def _legend(colour: dict[str, str], y: int) -> list[str]:
    out, x = [], 40
    for name, fill in colour.items():
        out.append(f'<rect x="{x}" y="{y}" width="10" height="10" fill="{fill}"/>'
                   f'<text x="{x + 14}" y="{y + 9}" class="legend">{escape(name)}</text>')
        x += 24 + 7 * len(name)
    return out


def daily_bars(counts: dict[date, Counter[str]], title: str, width: int = 720,
               height: int = 200) -> Markup:
    """Bars per day (oldest left) stacked by the Counter's keys (tools)."""
    days = sorted(counts)
    if not days:
        return Markup(f'<p class="empty">{escape(title)}: nothing yet.</p>')
    colour = colours(k for c in counts.values() for k in c)
    top = max(sum(c.values()) for c in counts.values()) or 1
    plot_h, left, bottom = height - 60, 40, height - 40
    step = (width - left - 10) / len(days)
    bar = max(1.0, step * 0.8)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" '
             f'viewBox="0 0 {width} {height}" width="{width}" height="{height}">'
             f'<title>{escape(title)}</title>',
             f'<text x="{left}" y="14" class="chart-title">{escape(title)}</text>',
             f'<line x1="{left}" y1="{bottom}" x2="{width - 10}" y2="{bottom}" class="axis"/>',
             f'<text x="{left - 4}" y="{bottom - plot_h + 4}" class="tick" '
             f'text-anchor="end">{top}</text>',
             f'<text x="{left - 4}" y="{bottom}" class="tick" text-anchor="end">0</text>']
    label_every = max(1, len(days) // 8)
    for i, day in enumerate(days):
        x = left + i * step + (step - bar) / 2
        y = float(bottom)
        for name, n in sorted(counts[day].items()):
            h = plot_h * n / top
            y -= h
            parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar:.1f}" height="{h:.1f}" '
                         f'fill="{colour[name]}"><title>{escape(day.isoformat())} '
                         f'{escape(name)}: {n}</title></rect>')
        if i % label_every == 0:
            parts.append(f'<text x="{x + bar / 2:.1f}" y="{bottom + 14}" class="tick" '
                         f'text-anchor="middle">{escape(day.strftime("%m-%d"))}</text>')
    parts += _legend(colour, height - 14)
    parts.append("</svg>")
    return Markup("".join(parts))


def stacked_rows(rows: dict[str, Counter[str]], title: str, width: int = 720) -> Markup:
    """One horizontal bar per row (types), stacked by the Counter's keys (statuses)."""
    if not rows:
        return Markup(f'<p class="empty">{escape(title)}: nothing yet.</p>')
    colour = colours(k for c in rows.values() for k in c)
    top = max(sum(c.values()) for c in rows.values()) or 1
    left, row_h = 130, 22
    height = 40 + row_h * len(rows) + 24
    plot_w = width - left - 50
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" '
             f'viewBox="0 0 {width} {height}" width="{width}" height="{height}">'
             f'<title>{escape(title)}</title>',
             f'<text x="10" y="14" class="chart-title">{escape(title)}</text>']
    for i, (name, counter) in enumerate(sorted(rows.items())):
        y = 28 + i * row_h
        parts.append(f'<text x="{left - 6}" y="{y + 14}" class="tick" '
                     f'text-anchor="end">{escape(name)}</text>')
        x = float(left)
        for status, n in sorted(counter.items()):
            w = plot_w * n / top
            parts.append(f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{row_h - 6}" '
                         f'fill="{colour[status]}"><title>{escape(name)} {escape(status)}: '
                         f'{n}</title></rect>')
            x += w
        parts.append(f'<text x="{x + 4:.1f}" y="{y + 14}" class="tick">'
                     f'{sum(counter.values())}</text>')
    parts += _legend(colour, height - 16)
    parts.append("</svg>")
    return Markup("".join(parts))
