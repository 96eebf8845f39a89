"""Where a point of a page lies after a flattening, and back.

:class:`~docintent.tools.dewarp.Dewarp` squares a page up with a perspective transform and then straightens its
text lines with a vertical displacement field. It records both on the page it makes (``page.meta["warp"]``, a
:class:`PageWarp`), so a region of the page before can be found on the page after without reading the page
again, and an answer read on the flattened page can be boxed on the page as it was captured.

The transform is known exactly in the direction the remap used, from the page after to the page before:
a pixel ``(x, y)`` after came from ``(x, y + dy(x, y))`` of the squared-up page, which came from the capture
through the inverse of the perspective matrix. The other direction inverts the displacement by fixed-point
iteration, which converges because the field is smooth (its slope along a column is far below one).

>>> import numpy as np
>>> warp = PageWarp(None, np.full((4, 4), 10.0, np.float32), (100, 200), (100, 200))
>>> warp.to_before(np.array([[50.0, 50.0]])).round(2).tolist()
[[50.0, 60.0]]
>>> warp.to_after(np.array([[50.0, 60.0]])).round(2).tolist()
[[50.0, 50.0]]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..page import Box

#: Points sampled along each side of a box that is mapped (a curved page bends a box's sides).
EDGE_POINTS = 9
#: Fixed-point steps that invert the displacement field.
INVERSE_STEPS = 8


@dataclass(frozen=True)
class PageWarp:
    """A flattening's transform. ``homography``: the 3x3 perspective matrix from capture pixels to squared-up
    pixels (None: no perspective step); ``dy``: the vertical displacement (in pixels of the page after) on a
    coarse grid spread over the page after, (rows, columns), or None (no curvature step); ``size_before`` and
    ``size_after``: (width, height) of the two pages."""

    homography: np.ndarray | None
    dy: np.ndarray | None
    size_before: tuple[int, int]
    size_after: tuple[int, int]

    def _dy_at(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The displacement at pixel positions of the page after, interpolated as ``cv2.resize`` (linear) does."""
        if self.dy is None:
            return np.zeros_like(y)
        gh, gw = self.dy.shape
        w, h = self.size_after
        gx = np.clip((x + 0.5) * gw / w - 0.5, 0, gw - 1)
        gy = np.clip((y + 0.5) * gh / h - 0.5, 0, gh - 1)
        x0, y0 = np.floor(gx).astype(int), np.floor(gy).astype(int)
        x1, y1 = np.minimum(x0 + 1, gw - 1), np.minimum(y0 + 1, gh - 1)
        fx, fy = gx - x0, gy - y0
        top = self.dy[y0, x0] * (1 - fx) + self.dy[y0, x1] * fx
        bottom = self.dy[y1, x0] * (1 - fx) + self.dy[y1, x1] * fx
        return top * (1 - fy) + bottom * fy

    @staticmethod
    def _project(matrix: np.ndarray, points: np.ndarray) -> np.ndarray:
        ones = np.ones((points.shape[0], 1))
        out = np.concatenate([points, ones], axis=1) @ matrix.T
        return out[:, :2] / np.where(np.abs(out[:, 2:]) < 1e-12, 1e-12, out[:, 2:])

    def to_before(self, points: np.ndarray) -> np.ndarray:
        """Pixel positions ``(n, 2)`` of the page after -> where they came from on the page before."""
        x, y = points[:, 0].astype(np.float64), points[:, 1].astype(np.float64)
        squared = np.stack([x, y + self._dy_at(x, y)], axis=1)
        if self.homography is None:
            return squared
        return self._project(np.linalg.inv(self.homography), squared)

    def to_after(self, points: np.ndarray) -> np.ndarray:
        """Pixel positions ``(n, 2)`` of the page before -> where they lie on the page after."""
        squared = points.astype(np.float64)
        if self.homography is not None:
            squared = self._project(self.homography, squared)
        x, target = squared[:, 0], squared[:, 1]
        y = target.copy()
        for _ in range(INVERSE_STEPS):  # y + dy(x, y) = target
            y = target - self._dy_at(x, y)
        return np.stack([x, y], axis=1)

    def map_box(self, box: Box, forward: bool = True) -> Box | None:
        """``box`` (fractions of the page before; of the page after when not ``forward``) on the other page: the
        box around its mapped outline, clipped to the page; None when nothing of it lands on the page."""
        (w0, h0), (w1, h1) = (self.size_before, self.size_after) if forward else (self.size_after, self.size_before)
        t = np.linspace(0.0, 1.0, EDGE_POINTS)
        xs = box.x0 + (box.x1 - box.x0) * t
        ys = box.y0 + (box.y1 - box.y0) * t
        outline = np.concatenate(
            [
                np.stack([xs, np.full_like(xs, box.y0)], axis=1),
                np.stack([xs, np.full_like(xs, box.y1)], axis=1),
                np.stack([np.full_like(ys, box.x0), ys], axis=1),
                np.stack([np.full_like(ys, box.x1), ys], axis=1),
            ]
        ) * np.array([w0, h0])
        moved = (self.to_after if forward else self.to_before)(outline) / np.array([w1, h1])
        if not np.all(np.isfinite(moved)):
            return None
        x0, y0 = moved.min(axis=0)
        x1, y1 = moved.max(axis=0)
        x0, y0, x1, y1 = max(0.0, x0), max(0.0, y0), min(1.0, x1), min(1.0, y1)
        if x1 <= x0 or y1 <= y0:
            return None
        return Box(float(x0), float(y0), float(x1), float(y1))


__all__ = ["PageWarp"]
