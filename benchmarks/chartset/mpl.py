"""The matplotlib rendering path of :mod:`chartset`: one PNG per chart spec, with the pixel box of every mark."""

from __future__ import annotations

import io
import random

import numpy as np

from . import LOOKS, ChartSpec, format_value

_PALETTES = {
    "tab10": ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728"],
    "deep": ["#4c72b0", "#dd8452", "#55a868", "#c44e52"],
    "muted": ["#4878d0", "#ee854a", "#6acc64", "#d65f5f"],
    "colorblind": ["#0173b2", "#de8f05", "#029e73", "#d55e00"],
    "classic": ["#0000ff", "#008000", "#ff0000", "#00bfbf"],
}


def render(spec: ChartSpec) -> tuple[np.ndarray, dict[str, list[float]]]:
    """The chart as an RGB array and the box (x0, y0, x1, y1 in pixels) of each mark, keyed "series|category"."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter
    from PIL import Image

    look = LOOKS[spec.style.look]
    rng = random.Random(spec.id)
    kind, cats, series, vals = spec.style.kind, spec.categories, spec.series, spec.values
    rc = {
        "font.family": look["font"],
        "font.size": rng.choice((10, 11, 12)),
        "svg.hashsalt": "chartset",
        "axes.titlesize": 14,
    }
    dpi = rng.choice((130, 150, 170))
    size = rng.choice(((8.0, 5.2), (7.2, 5.0), (8.4, 5.6)))
    boxes: dict[str, list[float]] = {}
    with plt.style.context(look["mpl_style"]), plt.rc_context(rc):
        palette = _PALETTES.get(look["palette"]) or [c["color"] for c in plt.rcParams["axes.prop_cycle"]][:4]
        fig, ax = plt.subplots(figsize=size, dpi=dpi)
        # a tick prints as many decimals as it has (2.5 % is not "2%")
        tick = FuncFormatter(lambda v, _p: format_value(v, spec.fmt, 0 if float(v).is_integer() else 1))
        artists: list[tuple[str, str, object]] = []
        n, m = len(cats), len(series)
        x = np.arange(n)
        if kind in ("pie", "donut"):
            wedge = {"edgecolor": "white", "linewidth": 1.5}
            if kind == "donut":
                wedge["width"] = 0.42
            pct = (lambda p: f"{p:.0f}%") if spec.style.labelled else None
            out = ax.pie(
                vals[0],
                labels=cats,
                autopct=pct,
                startangle=rng.choice((0, 90, 140)),
                colors=(palette + ["#8c564b", "#e377c2", "#7f7f7f", "#bcbd22"])[:n],
                wedgeprops=wedge,
                pctdistance=0.78 if kind == "donut" else 0.6,
                counterclock=rng.random() < 0.5,
            )
            ax.axis("equal")
            for c, w in zip(cats, out[0]):
                artists.append((series[0], c, w))
        elif kind in ("vbar", "hbar"):
            colour = palette[rng.randrange(len(palette))]
            if kind == "vbar":
                bars = ax.bar(cats, vals[0], color=colour, width=0.6)
            else:
                bars = ax.barh(cats, vals[0], color=colour, height=0.6)
            if kind == "hbar":
                ax.invert_yaxis()
            if spec.style.labelled:
                ax.bar_label(bars, labels=[spec.label(v) for v in vals[0]], padding=3)
            artists += [(series[0], c, b) for c, b in zip(cats, bars)]
        elif kind in ("grouped", "hgrouped"):
            width = 0.8 / m
            for k, s in enumerate(series):
                off = x + (k - (m - 1) / 2) * width
                bars = (
                    ax.bar(off, vals[k], width, label=s, color=palette[k])
                    if kind == "grouped"
                    else ax.barh(off, vals[k], width, label=s, color=palette[k])
                )
                if spec.style.labelled:
                    ax.bar_label(bars, labels=[spec.label(v) for v in vals[k]], padding=2, fontsize=8)
                artists += [(s, c, b) for c, b in zip(cats, bars)]
            (ax.set_xticks if kind == "grouped" else ax.set_yticks)(x, cats)
            if kind == "hgrouped":
                ax.invert_yaxis()
        elif kind in ("stacked", "hstacked"):
            base = np.zeros(n)
            for k, s in enumerate(series):
                bars = (
                    ax.bar(x, vals[k], 0.6, bottom=base, label=s, color=palette[k])
                    if kind == "stacked"
                    else ax.barh(x, vals[k], 0.6, left=base, label=s, color=palette[k])
                )
                if spec.style.labelled:
                    ax.bar_label(
                        bars, labels=[spec.label(v) for v in vals[k]], label_type="center", fontsize=8, color="white"
                    )
                base += np.array(vals[k])
                artists += [(s, c, b) for c, b in zip(cats, bars)]
            (ax.set_xticks if kind == "stacked" else ax.set_yticks)(x, cats)
            if kind == "hstacked":
                ax.invert_yaxis()
        else:  # line, multiline, scatter
            marker = rng.choice(("o", "s", "^", "D"))
            for k, s in enumerate(series):
                if kind == "scatter":
                    ax.scatter(x, vals[k], s=55, color=palette[k], label=s, marker=marker, zorder=3)
                else:
                    ax.plot(x, vals[k], marker=marker, color=palette[k], label=s, linewidth=2.0)
                if spec.style.labelled:
                    for xi, v in zip(x, vals[k]):
                        ax.annotate(
                            spec.label(v), (xi, v), textcoords="offset points", xytext=(0, 7), ha="center", fontsize=8
                        )
                artists += [(s, c, (xi, v)) for c, xi, v in zip(cats, x, vals[k])]
            ax.set_xticks(x, cats)
            lo = min(min(v) for v in vals)
            if lo > 0 and rng.random() < 0.5:
                ax.set_ylim(bottom=0)
        if kind not in ("pie", "donut"):
            (ax.yaxis if kind not in ("hbar", "hgrouped", "hstacked") else ax.xaxis).set_major_formatter(tick)
            if kind in ("vbar", "grouped", "stacked", "line", "multiline", "scatter") and n > 6:
                ax.tick_params(axis="x", rotation=30)
        ax.set_title(spec.title)
        if len(series) > 1:
            where = look["legend"]
            if where == "outside right":
                ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
            elif where == "outside top":
                ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.06), ncol=m, frameon=False)
            elif where == "outside bottom":
                ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=m, frameon=False)
            else:
                ax.legend(loc=where)
        if rng.random() < 0.5:
            fig.text(
                0.01,
                0.01,
                rng.choice(("Source: national statistics", "Source: company reports", "Note: provisional figures")),
                fontsize=8,
                color="0.4",
            )
        fig.tight_layout()
        fig.canvas.draw()
        height = fig.canvas.get_width_height()[1]
        for s, c, art in artists:
            if isinstance(art, tuple):
                px, py = ax.transData.transform(art)
                box = [px - 5, height - py - 5, px + 5, height - py + 5]
            else:
                ext = art.get_window_extent()
                box = [ext.x0, height - ext.y1, ext.x1, height - ext.y0]
            boxes[f"{s}|{c}"] = [round(float(v), 1) for v in box]
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi)
        plt.close(fig)
    buf.seek(0)
    return np.asarray(Image.open(buf).convert("RGB"), dtype=np.uint8).copy(), boxes
