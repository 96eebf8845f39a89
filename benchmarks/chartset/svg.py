"""The hand-written SVG rendering path of :mod:`chartset`: an HTML page holding one SVG chart, drawn by headless
Chromium, with the box of every mark computed while laying the chart out (CSS pixels; times the device scale in
the screenshot)."""

from __future__ import annotations

import html
import math
import random

from . import LOOKS, ChartSpec, format_value

WIDTH, HEIGHT = 760, 480


def nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """Evenly stepped ticks covering [lo, hi] with a 1 / 2 / 2.5 / 5 x 10^k step."""
    span = max(hi - lo, 1e-9)
    raw = span / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.floor(lo / step) * step
    ticks = []
    v = start
    while v <= hi + step * 0.999:
        ticks.append(round(v, 10))
        v += step
    return ticks


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def render(spec: ChartSpec) -> tuple[str, dict[str, list[float]]]:
    """The chart as an HTML page and the box (x0, y0, x1, y1, CSS pixels) of each mark, keyed "series|category"."""
    look = LOOKS[spec.style.look]
    rng = random.Random(spec.id)
    kind, cats, series, vals = spec.style.kind, spec.categories, spec.series, spec.values
    pal = list(look["palette"])
    font = look["font"]
    fs = rng.choice((12, 13, 14))
    out: list[str] = []
    boxes: dict[str, list[float]] = {}
    out.append(
        f'<text x="{WIDTH / 2}" y="30" text-anchor="middle" font-size="{fs + 5}" font-weight="bold">'
        f"{_esc(spec.title)}</text>"
    )
    left, right, top, bottom = 80, WIDTH - 30, 60, HEIGHT - 60
    multi = len(series) > 1
    legend = look["legend"] if multi else "none"
    if legend == "right":
        right -= 120
    elif legend in ("top", "top-left", "top-right"):
        top += 26
    elif legend == "bottom":
        bottom -= 26
    horizontal = kind in ("hbar", "hgrouped", "hstacked")
    if horizontal:
        left = 30 + 8 * max(len(c) for c in cats) + 12
    if legend != "none":
        items = []
        if legend == "right":
            for k, s in enumerate(series):
                y = top + 20 + 24 * k
                items.append(
                    f'<rect x="{right + 24}" y="{y - 10}" width="14" height="14" fill="{pal[k]}"/>'
                    f'<text x="{right + 44}" y="{y + 2}" font-size="{fs}">{_esc(s)}</text>'
                )
        else:
            widths = [24 + 8 * len(s) + 18 for s in series]
            total = sum(widths)
            x = {"top-left": left, "top-right": right - total}.get(legend, (left + right) / 2 - total / 2)
            y = top - 14 if legend.startswith("top") else HEIGHT - 18
            for k, s in enumerate(series):
                items.append(
                    f'<rect x="{x}" y="{y - 11}" width="14" height="14" fill="{pal[k]}"/>'
                    f'<text x="{x + 20}" y="{y + 1}" font-size="{fs}">{_esc(s)}</text>'
                )
                x += widths[k]
        out += items
    if kind in ("pie", "donut"):
        _pie(spec, out, boxes, pal, fs, rng)
        return _page(out, look, font), boxes
    stacked = kind in ("stacked", "hstacked")
    totals = [sum(v[i] for v in vals) for i in range(len(cats))] if stacked else None
    hi = max(totals) if totals else max(max(v) for v in vals)
    lo = 0.0
    if kind in ("line", "multiline", "scatter") and rng.random() < 0.5:
        lo = min(min(v) for v in vals) * 0.8
    ticks = nice_ticks(lo, hi * (1.12 if spec.style.labelled else 1.04))
    t0, t1 = ticks[0], ticks[-1]
    grid = look["grid"]
    dash = {"dashed": ' stroke-dasharray="5,4"', "dotted": ' stroke-dasharray="1,3"'}.get(grid, "")
    if grid == "band":
        for k in range(0, len(ticks) - 1, 2):
            a, b = ticks[k], ticks[k + 1]
            if horizontal:
                xa, xb = _lin(a, t0, t1, left, right), _lin(b, t0, t1, left, right)
                out.append(f'<rect x="{xa}" y="{top}" width="{xb - xa}" height="{bottom - top}" fill="#ebebe4"/>')
            else:
                ya, yb = _lin(a, t0, t1, bottom, top), _lin(b, t0, t1, bottom, top)
                out.append(f'<rect x="{left}" y="{yb}" width="{right - left}" height="{ya - yb}" fill="#ebebe4"/>')
    tick_dec = 0 if all(float(t).is_integer() for t in ticks) else 1
    for t in ticks:
        label = _esc(format_value(t, spec.fmt, tick_dec))
        if horizontal:
            x = _lin(t, t0, t1, left, right)
            if grid in ("solid", "dashed", "dotted"):
                out.append(f'<line x1="{x}" y1="{top}" x2="{x}" y2="{bottom}" stroke="#d0d0d0"{dash}/>')
            out.append(
                f'<text x="{x}" y="{bottom + 20}" text-anchor="middle" font-size="{fs - 1}" fill="#444">{label}</text>'
            )
        else:
            y = _lin(t, t0, t1, bottom, top)
            if grid in ("solid", "dashed", "dotted"):
                out.append(f'<line x1="{left}" y1="{y}" x2="{right}" y2="{y}" stroke="#d0d0d0"{dash}/>')
            out.append(
                f'<text x="{left - 8}" y="{y + 4}" text-anchor="end" font-size="{fs - 1}" fill="#444">{label}</text>'
            )
    frame = look["frame"]
    if frame in ("left-bottom", "box"):
        out.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{bottom}" stroke="#333"/>')
    if frame in ("left-bottom", "bottom", "box"):
        out.append(f'<line x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="#333"/>')
    if frame == "box":
        out.append(
            f'<line x1="{left}" y1="{top}" x2="{right}" y2="{top}" stroke="#333"/>'
            f'<line x1="{right}" y1="{top}" x2="{right}" y2="{bottom}" stroke="#333"/>'
        )
    n, m = len(cats), len(series)
    band = ((bottom - top) if horizontal else (right - left)) / n
    rounded = ' rx="4"' if look.get("rounded") else ""
    base = [0.0] * n
    single = pal[rng.randrange(len(pal))]
    for i, c in enumerate(cats):
        centre = (top if horizontal else left) + band * (i + 0.5)
        if horizontal:
            out.append(f'<text x="{left - 8}" y="{centre + 4}" text-anchor="end" font-size="{fs}">{_esc(c)}</text>')
        else:
            out.append(f'<text x="{centre}" y="{bottom + 20}" text-anchor="middle" font-size="{fs}">{_esc(c)}</text>')
    if kind in ("line", "multiline", "scatter"):
        for k, s in enumerate(series):
            pts = []
            for i, c in enumerate(cats):
                x = left + band * (i + 0.5)
                y = _lin(vals[k][i], t0, t1, bottom, top)
                pts.append((x, y))
                boxes[f"{s}|{c}"] = [x - 5, y - 5, x + 5, y + 5]
            if kind != "scatter":
                out.append(
                    f'<polyline points="{" ".join(f"{x:.1f},{y:.1f}" for x, y in pts)}" fill="none" '
                    f'stroke="{pal[k]}" stroke-width="2.5"/>'
                )
            for (x, y), v in zip(pts, vals[k]):
                r = 5 if kind == "scatter" else 3.5
                out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r}" fill="{pal[k]}"/>')
                if spec.style.labelled:
                    out.append(
                        f'<text x="{x:.1f}" y="{y - 10:.1f}" text-anchor="middle" font-size="{fs - 2}">'
                        f"{_esc(spec.label(v))}</text>"
                    )
        return _page(out, look, font), boxes
    for k, s in enumerate(series):
        for i, c in enumerate(cats):
            v = vals[k][i]
            if stacked:
                width = band * 0.6
                a, b = base[i], base[i] + v
                base[i] = b
                offset = band * 0.2
            elif m > 1:
                width = band * 0.8 / m
                a, b = 0.0, v
                offset = band * 0.1 + width * k
            else:
                width = band * 0.6
                a, b = 0.0, v
                offset = band * 0.2
            if horizontal:
                y0 = top + band * i + offset
                x0, x1 = _lin(a, t0, t1, left, right), _lin(b, t0, t1, left, right)
                box = [x0, y0, x1, y0 + width]
            else:
                x0 = left + band * i + offset
                y1, y0 = _lin(a, t0, t1, bottom, top), _lin(b, t0, t1, bottom, top)
                box = [x0, y0, x0 + width, y1]
            boxes[f"{s}|{c}"] = [round(v_, 2) for v_ in box]
            colour = pal[k] if m > 1 else single
            out.append(
                f'<rect x="{box[0]:.1f}" y="{box[1]:.1f}" width="{box[2] - box[0]:.1f}" '
                f'height="{box[3] - box[1]:.1f}" fill="{colour}"{rounded}/>'
            )
            if spec.style.labelled:
                label = _esc(spec.label(v))
                small = fs - 2 if m > 1 else fs - 1
                if stacked:
                    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2 + 4
                    out.append(
                        f'<text x="{cx:.1f}" y="{cy:.1f}" text-anchor="middle" font-size="{small}" '
                        f'fill="#fff">{label}</text>'
                    )
                elif horizontal:
                    out.append(
                        f'<text x="{box[2] + 5:.1f}" y="{(box[1] + box[3]) / 2 + 4:.1f}" font-size="{small}">'
                        f"{label}</text>"
                    )
                else:
                    out.append(
                        f'<text x="{(box[0] + box[2]) / 2:.1f}" y="{box[1] - 5:.1f}" text-anchor="middle" '
                        f'font-size="{small}">{label}</text>'
                    )
    return _page(out, look, font), boxes


def _lin(v: float, a: float, b: float, pa: float, pb: float) -> float:
    return pa + (v - a) / (b - a) * (pb - pa)


def _pie(
    spec: ChartSpec, out: list[str], boxes: dict[str, list[float]], pal: list[str], fs: int, rng: random.Random
) -> None:
    cx, cy, r = WIDTH / 2, HEIGHT / 2 + 20, 150
    inner = 70 if spec.style.kind == "donut" else 0
    colours = pal + ["#8c564b", "#e377c2", "#7f7f7f", "#bcbd22"]
    angle = rng.choice((-90.0, 0.0, 30.0))
    total = sum(spec.values[0])
    for k, (c, v) in enumerate(zip(spec.categories, spec.values[0])):
        sweep = 360.0 * v / total
        a0, a1 = math.radians(angle), math.radians(angle + sweep)
        large = 1 if sweep > 180 else 0
        p = [
            f"M {cx + r * math.cos(a0):.2f} {cy + r * math.sin(a0):.2f}",
            f"A {r} {r} 0 {large} 1 {cx + r * math.cos(a1):.2f} {cy + r * math.sin(a1):.2f}",
        ]
        if inner:
            p += [
                f"L {cx + inner * math.cos(a1):.2f} {cy + inner * math.sin(a1):.2f}",
                f"A {inner} {inner} 0 {large} 0 {cx + inner * math.cos(a0):.2f} {cy + inner * math.sin(a0):.2f}",
                "Z",
            ]
        else:
            p += [f"L {cx} {cy}", "Z"]
        out.append(f'<path d="{" ".join(p)}" fill="{colours[k]}" stroke="#fff" stroke-width="2"/>')
        mid = math.radians(angle + sweep / 2)
        lx, ly = cx + (r + 28) * math.cos(mid), cy + (r + 28) * math.sin(mid)
        anchor = "start" if math.cos(mid) > 0.2 else "end" if math.cos(mid) < -0.2 else "middle"
        out.append(f'<text x="{lx:.1f}" y="{ly + 5:.1f}" text-anchor="{anchor}" font-size="{fs}">{_esc(c)}</text>')
        rr = (r + inner) / 2 if inner else r * 0.62
        px, py = cx + rr * math.cos(mid), cy + rr * math.sin(mid)
        if spec.style.labelled:
            out.append(
                f'<text x="{px:.1f}" y="{py + 5:.1f}" text-anchor="middle" font-size="{fs}" fill="#fff" '
                f'font-weight="bold">{v:.0f}%</text>'
            )
        boxes[f"{spec.series[0]}|{c}"] = [px - 6, py - 6, px + 6, py + 6]
        angle += sweep


def _page(body: list[str], look: dict, font: str) -> str:
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><style>html,body{{margin:0;background:{look['bg']}}}"
        f"svg text{{font-family:{font};fill-opacity:1}}</style></head><body>"
        f"<svg id='chart' xmlns='http://www.w3.org/2000/svg' width='{WIDTH}' height='{HEIGHT}' "
        f"viewBox='0 0 {WIDTH} {HEIGHT}'>" + "".join(body) + "</svg></body></html>"
    )
