"""Charts as inline SVG: bars, lines and pies whose value labels, axis labels and legends are real text, so
the rendered PDF's text layer carries them and the gold answers can be checked like any other text."""

from __future__ import annotations

import math

from .common import e

PALETTES = (
    ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"),
    ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948"),
    ("#264653", "#2a9d8f", "#e9c46a", "#f4a261", "#e76f51", "#8ab17d"),
    ("#3b4cc0", "#b40426", "#6f9b3a", "#d7a100", "#7a4e9c", "#1f8f8f"),
)


def fmt(v: float, decimals: int) -> str:
    """A value label."""
    return f"{v:,.{decimals}f}"


def bar_chart(
    categories: list[str],
    series: list[tuple[str, list[float]]],
    colours: tuple[str, ...],
    *,
    width: int = 520,
    height: int = 300,
    decimals: int = 0,
    unit: str = "",
    title: str = "",
    font: str = "DejaVu Sans",
    horizontal: bool = False,
) -> str:
    """Grouped bars with the value printed on each bar and a legend when there is more than one series."""
    n, k = len(categories), len(series)
    top = 34 if title else 14
    legend_h = 22 if k > 1 else 0
    left, bottom = (120 if horizontal else 46), 40
    pw, ph = width - left - 16, height - top - bottom - legend_h
    vmax = max(max(v) for _, v in series) * 1.18
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="{e(font)}">']
    if title:
        out.append(
            f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="15" font-weight="bold">{e(title)}</text>'
        )
    out.append(f'<line x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}" stroke="#333"/>')
    out.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + ph}" stroke="#333"/>')
    for i, cat in enumerate(categories):
        if horizontal:
            slot = ph / n
            y0 = top + i * slot + slot * 0.15
            bh = slot * 0.7 / k
            out.append(
                f'<text x="{left - 6}" y="{y0 + slot * 0.35 + 4}" text-anchor="end" font-size="12">{e(cat)}</text>'
            )
            for j, (_, values) in enumerate(series):
                w = pw * values[i] / vmax
                y = y0 + j * bh
                out.append(f'<rect x="{left}" y="{y:.1f}" width="{w:.1f}" height="{bh:.1f}" fill="{colours[j]}"/>')
                out.append(
                    f'<text x="{left + w + 4:.1f}" y="{y + bh / 2 + 4:.1f}" font-size="11">'
                    f"{e(fmt(values[i], decimals) + unit)}</text>"
                )
        else:
            slot = pw / n
            x0 = left + i * slot + slot * 0.12
            bw = slot * 0.76 / k
            out.append(
                f'<text x="{left + i * slot + slot / 2:.1f}" y="{top + ph + 16}" text-anchor="middle" '
                f'font-size="12">{e(cat)}</text>'
            )
            for j, (_, values) in enumerate(series):
                h = ph * values[i] / vmax
                x = x0 + j * bw
                out.append(
                    f'<rect x="{x:.1f}" y="{top + ph - h:.1f}" width="{bw:.1f}" height="{h:.1f}" fill="{colours[j]}"/>'
                )
                out.append(
                    f'<text x="{x + bw / 2:.1f}" y="{top + ph - h - 4:.1f}" text-anchor="middle" '
                    f'font-size="11">{e(fmt(values[i], decimals) + unit)}</text>'
                )
    if k > 1:
        out.append(_legend([name for name, _ in series], colours, left, height - 10))
    out.append("</svg>")
    return "".join(out)


def line_chart(
    xs: list[str],
    series: list[tuple[str, list[float]]],
    colours: tuple[str, ...],
    *,
    width: int = 520,
    height: int = 290,
    decimals: int = 1,
    unit: str = "",
    title: str = "",
    font: str = "DejaVu Sans",
) -> str:
    """Lines with a labelled marker at every point and a legend."""
    top = 34 if title else 14
    left, bottom, legend_h = 46, 40, 22
    pw, ph = width - left - 24, height - top - bottom - legend_h
    values = [v for _, vs in series for v in vs]
    lo, hi = min(values), max(values)
    span = hi - lo or 1.0
    lo, hi = lo - 0.15 * span, hi + 0.25 * span
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="{e(font)}">']
    if title:
        out.append(
            f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="15" font-weight="bold">{e(title)}</text>'
        )
    out.append(f'<line x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}" stroke="#333"/>')
    step = pw / max(len(xs) - 1, 1)
    for i, x in enumerate(xs):
        out.append(
            f'<text x="{left + i * step:.1f}" y="{top + ph + 16}" text-anchor="middle" font-size="12">{e(x)}</text>'
        )
    for j, (_, vs) in enumerate(series):
        pts = [(left + i * step, top + ph - ph * (v - lo) / (hi - lo)) for i, v in enumerate(vs)]
        out.append(
            f'<polyline fill="none" stroke="{colours[j]}" stroke-width="2.5" points="'
            + " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)
            + '"/>'
        )
        for i, ((x, y), v) in enumerate(zip(pts, vs)):
            # the label goes above the higher point of the two series and below the lower one
            dy = -8 if v >= max(other[i] for _, other in series) else 16
            out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{colours[j]}"/>')
            out.append(
                f'<text x="{x:.1f}" y="{y + dy:.1f}" text-anchor="middle" font-size="11" fill="#222">'
                f"{e(fmt(v, decimals) + unit)}</text>"
            )
    out.append(_legend([name for name, _ in series], colours, left, height - 10))
    out.append("</svg>")
    return "".join(out)


def pie_chart(
    labels: list[str],
    shares: list[int],
    colours: tuple[str, ...],
    *,
    size: int = 250,
    title: str = "",
    font: str = "DejaVu Sans",
    legend_right: bool = True,
) -> str:
    """A pie with the percentage on each slice and a legend ``label (NN%)``."""
    r = size * 0.38
    cx, cy = size / 2, size / 2 + (18 if title else 0)
    lw = 210 if legend_right else 0
    h = size + (18 if title else 0) + (0 if legend_right else 22 * len(labels))
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{size + lw}" height="{h}" font-family="{e(font)}">']
    if title:
        out.append(
            f'<text x="{(size + lw) / 2}" y="16" text-anchor="middle" font-size="15" font-weight="bold">{e(title)}</text>'
        )
    total = float(sum(shares))
    angle = -math.pi / 2
    for i, share in enumerate(shares):
        sweep = 2 * math.pi * share / total
        x1, y1 = cx + r * math.cos(angle), cy + r * math.sin(angle)
        x2, y2 = cx + r * math.cos(angle + sweep), cy + r * math.sin(angle + sweep)
        large = 1 if sweep > math.pi else 0
        out.append(
            f'<path d="M{cx:.1f},{cy:.1f} L{x1:.1f},{y1:.1f} A{r:.1f},{r:.1f} 0 {large} 1 {x2:.1f},{y2:.1f} Z" '
            f'fill="{colours[i]}" stroke="#fff" stroke-width="1.5"/>'
        )
        mid = angle + sweep / 2
        tx, ty = cx + 0.66 * r * math.cos(mid), cy + 0.66 * r * math.sin(mid)
        out.append(
            f'<text x="{tx:.1f}" y="{ty + 4:.1f}" text-anchor="middle" font-size="12" fill="#fff" '
            f'font-weight="bold">{share}%</text>'
        )
        angle += sweep
    for i, name in enumerate(labels):
        x, y = (size + 8, 30 + i * 22) if legend_right else (10, size + 20 + i * 22)
        out.append(f'<rect x="{x}" y="{y}" width="12" height="12" fill="{colours[i]}"/>')
        out.append(f'<text x="{x + 18}" y="{y + 11}" font-size="12">{e(name)} ({shares[i]}%)</text>')
    out.append("</svg>")
    return "".join(out)


def _legend(names: list[str], colours: tuple[str, ...], x: float, y: float) -> str:
    parts = []
    for j, name in enumerate(names):
        parts.append(
            f'<rect x="{x}" y="{y - 10}" width="12" height="12" fill="{colours[j]}"/>'
            f'<text x="{x + 17}" y="{y}" font-size="12">{e(name)}</text>'
        )
        x += 30 + 8 * len(name)
    return "".join(parts)


def shares(rng, k: int) -> list[int]:
    """``k`` distinct whole percentages summing to 100, each at least 4."""
    while True:
        cuts = sorted(rng.sample(range(4, 97), k - 1))
        parts = [b - a for a, b in zip([0] + cuts, cuts + [100])]
        if min(parts) >= 4 and len(set(parts)) == k:
            return parts
