"""Figures a reader can move, in the built book, offline: a slider over precomputed frames.

:func:`slider_figure` turns a list of frames (one per slider position, each a few series of
numbers) into one self-contained block of HTML: the numbers as JSON and some forty lines of
JavaScript that draw the current frame as SVG. It needs no plotting library, no server and no
network, so it works in the HTML book, in Jupyter and when the page is saved to disk. The HTML
is a deterministic function of the frames (numbers rounded to ``digits`` significant digits, a
fixed element id), so a notebook that displays it compares equal under strict nbval on every
CPU. A chapter keeps its static matplotlib figure beside it for print and for readers without
JavaScript.

A frame is a dict with ``"series"`` (a list of series) and an optional ``"caption"`` (text
shown under the slider). A series is a dict with ``"kind"`` and its numbers:

* ``"line"``: ``x``, ``y`` (a polyline); ``"points"``: ``x``, ``y`` (dots);
* ``"band"``: ``x``, ``low``, ``high`` (a filled band between two curves);
* ``"bars"``: ``x``, ``y`` (vertical bars from 0, of width ``width``);
* ``"vline"``: ``x``; ``"hline"``: ``y`` (a reference line across the plot);

each with optional ``color`` (any CSS colour), ``label`` (legend text), ``dash`` (true for
dashed), ``size`` (dot radius, line width) and ``opacity``.

This module is the book's tooling, not the library: the library never imports it.
"""

from __future__ import annotations

import html
import json
import math
import re

__all__ = ["slider_figure"]

_KINDS = {"line": ("x", "y"), "points": ("x", "y"), "band": ("x", "low", "high"), "bars": ("x", "y"),
          "vline": ("x",), "hline": ("y",)}

_SCRIPT = r"""
(function () {
  var root = document.getElementById("%(id)s");
  if (!root || root.dataset.ready) return;
  root.dataset.ready = "1";
  var spec = JSON.parse(root.querySelector("script[type='application/json']").textContent);
  var svg = root.querySelector("svg"), slider = root.querySelector("input"), out = root.querySelector("output");
  var cap = root.querySelector(".dpcp-caption"), NS = "http://www.w3.org/2000/svg";
  var W = 640, H = 380, L = 62, R = 16, T = 14, B = 46;
  function sx(v) { return L + (v - spec.x[0]) / (spec.x[1] - spec.x[0]) * (W - L - R); }
  function sy(v) { return H - B - (v - spec.y[0]) / (spec.y[1] - spec.y[0]) * (H - T - B); }
  function el(name, attrs, text) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    svg.appendChild(e); return e;
  }
  function ticks(lo, hi) {
    var step = Math.pow(10, Math.floor(Math.log10((hi - lo) / 5))), m = (hi - lo) / step;
    step *= m > 25 ? 5 : m > 10 ? 2 : 1;
    var t = [];
    for (var v = Math.ceil(lo / step - 1e-9) * step; v <= hi + 1e-9 * step; v += step) t.push(+v.toPrecision(6));
    return t;
  }
  function draw(i) {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    var frame = spec.frames[i], legend = 0, all = spec.background.concat(frame.series);
    ticks(spec.x[0], spec.x[1]).forEach(function (v) {
      el("line", {x1: sx(v), x2: sx(v), y1: H - B, y2: H - B + 5, stroke: "#555"});
      el("text", {x: sx(v), y: H - B + 18, "text-anchor": "middle", "font-size": 14, fill: "#333"}, v);
    });
    ticks(spec.y[0], spec.y[1]).forEach(function (v) {
      el("line", {x1: L - 5, x2: L, y1: sy(v), y2: sy(v), stroke: "#555"});
      el("text", {x: L - 8, y: sy(v) + 4, "text-anchor": "end", "font-size": 14, fill: "#333"}, v);
    });
    el("line", {x1: L, x2: W - R, y1: H - B, y2: H - B, stroke: "#555"});
    el("line", {x1: L, x2: L, y1: T, y2: H - B, stroke: "#555"});
    el("text", {x: (L + W - R) / 2, y: H - 8, "text-anchor": "middle", "font-size": 15}, spec.xlabel);
    el("text", {x: 14, y: (T + H - B) / 2, "text-anchor": "middle", "font-size": 15,
                transform: "rotate(-90 14 " + (T + H - B) / 2 + ")"}, spec.ylabel);
    all.forEach(function (s) {
      var c = s.color || "#1f77b4", o = s.opacity === undefined ? 1 : s.opacity, w = s.size || 2;
      var dash = s.dash ? "5 4" : "none", pts;
      if (s.kind === "line") {
        pts = s.x.map(function (v, j) { return sx(v) + "," + sy(s.y[j]); }).join(" ");
        el("polyline", {points: pts, fill: "none", stroke: c, "stroke-width": w, "stroke-dasharray": dash,
                        opacity: o, "class": "dpcp-series"});
      } else if (s.kind === "band") {
        pts = s.x.map(function (v, j) { return sx(v) + "," + sy(s.high[j]); })
          .concat(s.x.slice().reverse().map(function (v, j) {
            return sx(v) + "," + sy(s.low[s.x.length - 1 - j]); })).join(" ");
        el("polygon", {points: pts, fill: c, opacity: o, stroke: "none", "class": "dpcp-series"});
      } else if (s.kind === "points") {
        s.x.forEach(function (v, j) {
          el("circle", {cx: sx(v), cy: sy(s.y[j]), r: s.size || 2.5, fill: c, opacity: o, "class": "dpcp-series"});
        });
      } else if (s.kind === "bars") {
        var half = (sx(spec.x[0] + (s.width || 0)) - sx(spec.x[0])) / 2;
        s.x.forEach(function (v, j) {
          var top = sy(Math.max(s.y[j], 0)), base = sy(Math.max(spec.y[0], 0));
          el("rect", {x: sx(v) - half, y: top, width: Math.max(2 * half, 1), height: Math.max(base - top, 0),
                      fill: c, opacity: o, "class": "dpcp-series"});
        });
      } else if (s.kind === "vline") {
        el("line", {x1: sx(s.x), x2: sx(s.x), y1: T, y2: H - B, stroke: c, "stroke-width": w,
                    "stroke-dasharray": dash, opacity: o, "class": "dpcp-series"});
      } else if (s.kind === "hline") {
        el("line", {x1: L, x2: W - R, y1: sy(s.y), y2: sy(s.y), stroke: c, "stroke-width": w,
                    "stroke-dasharray": dash, opacity: o, "class": "dpcp-series"});
      }
      if (s.label) {
        el("rect", {x: L + 12, y: T + 6 + 18 * legend, width: 14, height: 10, fill: c, opacity: Math.max(o, 0.5)});
        el("text", {x: L + 32, y: T + 15 + 18 * legend, "font-size": 14, fill: "#222"}, s.label);
        legend += 1;
      }
    });
    out.textContent = spec.values[i];
    cap.textContent = frame.caption || "";
  }
  slider.addEventListener("input", function () { draw(+slider.value); });
  draw(+slider.value);
})();
"""


def _round(value, digits: int):
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return [_round(v, digits) for v in value]
    if hasattr(value, "tolist"):
        return _round(value.tolist(), digits)
    number = float(value)
    if not math.isfinite(number):
        raise ValueError("slider_figure: every number must be finite; clip infinite values to the axis range")
    rounded = float(f"{number:.{digits}g}")
    return int(rounded) if rounded.is_integer() and abs(rounded) < 2**53 else rounded


def _check_frames(frames) -> list[dict]:
    if not isinstance(frames, (list, tuple)) or not frames:
        raise ValueError("slider_figure: frames must be a non-empty list of dicts, one per slider position")
    checked = []
    for i, frame in enumerate(frames):
        if not isinstance(frame, dict) or not isinstance(frame.get("series"), (list, tuple)):
            raise ValueError(f"slider_figure: frame {i} must be a dict with a list under 'series'")
        for series in frame["series"]:
            kind = series.get("kind") if isinstance(series, dict) else None
            if kind not in _KINDS:
                raise ValueError(f"slider_figure: frame {i} has a series of kind {kind!r}; "
                                 f"use one of {sorted(_KINDS)}")
            missing = [key for key in _KINDS[kind] if key not in series]
            if missing:
                raise ValueError(f"slider_figure: a {kind!r} series of frame {i} needs {missing}")
        checked.append(frame)
    return checked


def slider_figure(frames, values, *, figure_id: str, slider_label: str, x_range, y_range,
                  x_label: str = "", y_label: str = "", title: str = "", background=(), start: int = 0,
                  digits: int = 4) -> str:
    """HTML of a figure whose frame is chosen by a slider, drawn as SVG by inline JavaScript.

    Parameters
    ----------
    frames : list of dict
        One frame per slider position (see the module docstring for the series kinds).
    values : list of str
        The slider's readout at each position (e.g. ``"ε = 0.5"``); same length as ``frames``.
    figure_id : str
        The HTML id of the figure (letters, digits, ``-`` and ``_``); unique on its page. A fixed id keeps
        the HTML deterministic.
    slider_label : str
        Text before the slider.
    x_range, y_range : (float, float)
        The axes' ranges (fixed for all frames, so that moving the slider shows the change).
    x_label, y_label, title : str, default ""
        Axis labels and a title above the figure.
    background : list of dict, default ()
        Series drawn under every frame (the data, a reference line), stored once.
    start : int, default 0
        The slider's initial position (the frame shown before any interaction and in print).
    digits : int, default 4
        Significant digits kept for every number.

    Returns
    -------
    str
        A block of HTML (display it with ``IPython.display.HTML``).

    Examples
    --------
    >>> frames = [{"series": [{"kind": "line", "x": [0, 1], "y": [0, s]}], "caption": f"slope {s}"}
    ...           for s in (0.5, 1.0)]
    >>> page = slider_figure(frames, ["slope 0.5", "slope 1"], figure_id="demo", slider_label="slope",
    ...                      x_range=(0, 1), y_range=(0, 1))
    >>> page.startswith('<div class="dpcp-interactive" id="demo">')
    True
    """
    frames = _check_frames(frames)
    background = _check_frames([{"series": list(background)}])[0]["series"]
    values = [str(v) for v in values]
    if len(values) != len(frames):
        raise ValueError(f"slider_figure: {len(values)} slider values for {len(frames)} frames; give one per frame")
    if not isinstance(figure_id, str) or not re.fullmatch(r"[A-Za-z][\w-]*", figure_id):
        raise ValueError("slider_figure: figure_id must start with a letter and hold only letters, digits, - and _")
    if not 0 <= int(start) < len(frames):
        raise ValueError(f"slider_figure: start must be a position 0..{len(frames) - 1}")
    ranges = [_round(list(r), digits) for r in (x_range, y_range)]
    if any(len(r) != 2 or not r[0] < r[1] for r in ranges):
        raise ValueError("slider_figure: x_range and y_range must be (low, high) with low < high")
    spec = {"x": ranges[0], "y": ranges[1], "xlabel": x_label, "ylabel": y_label, "values": values,
            "background": [{k: _round(v, digits) for k, v in s.items()} for s in background],
            "frames": [{"caption": str(f.get("caption", "")),
                        "series": [{k: _round(v, digits) for k, v in s.items()} for s in f["series"]]}
                       for f in frames]}
    data = json.dumps(spec, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")
    heading = f'<div class="dpcp-title">{html.escape(title)}</div>' if title else ""
    return (f'<div class="dpcp-interactive" id="{figure_id}">{heading}'
            f'<svg viewBox="0 0 640 380" role="img" aria-label="{html.escape(title or y_label)}"></svg>'
            f'<label>{html.escape(slider_label)} <input type="range" min="0" max="{len(frames) - 1}" step="1" '
            f'value="{int(start)}"> <output></output></label>'
            f'<div class="dpcp-caption"></div>'
            f'<script type="application/json">{data}</script>'
            f"<script>{_SCRIPT % {'id': figure_id}}</script></div>")
