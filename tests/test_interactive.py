"""The book's slider figures: deterministic HTML, numbers rounded, bad frames refused by name.

Whether a figure draws and responds in a browser is checked on the built pages by
tests/check_pages.py (headless Chromium moves each slider).
"""

import json
import re

import numpy as np
import pytest

from dpcp_tutorial.experiments import available
from dpcp_tutorial.experiments.interactive import slider_figure


def _frames():
    x = np.linspace(0, 1, 5)
    return [{"series": [{"kind": "line", "x": x, "y": x * s}, {"kind": "hline", "y": 0.5}],
             "caption": f"slope {s}"} for s in (1 / 3, 2 / 3)]


def _spec(page):
    return json.loads(re.search(r"<script type=\"application/json\">(.*?)</script>", page, re.S).group(1))


def test_same_frames_same_html_and_numbers_rounded():
    one = slider_figure(_frames(), ["a", "b"], figure_id="f1", slider_label="s", x_range=(0, 1), y_range=(0, 1))
    two = slider_figure(_frames(), ["a", "b"], figure_id="f1", slider_label="s", x_range=(0, 1), y_range=(0, 1))
    assert one == two
    spec = _spec(one)
    assert spec["frames"][0]["series"][0]["y"][1] == 0.08333      # 0.25 / 3 at 4 significant digits
    assert spec["values"] == ["a", "b"] and spec["frames"][1]["caption"] == "slope 0.6666666666666666"
    assert 'id="f1"' in one and 'max="1"' in one


def test_background_is_stored_once():
    page = slider_figure(_frames(), ["a", "b"], figure_id="f2", slider_label="s", x_range=(0, 1),
                         y_range=(0, 1), background=[{"kind": "points", "x": [0.1], "y": [0.2]}])
    assert _spec(page)["background"] == [{"kind": "points", "x": [0.1], "y": [0.2]}]


@pytest.mark.parametrize("change, message", [
    ({"frames": []}, "non-empty list"),
    ({"frames": [{"series": [{"kind": "pie", "x": [1]}]}]}, "kind 'pie'"),
    ({"frames": [{"series": [{"kind": "band", "x": [1], "low": [0]}]}]}, "needs ['high']"),
    ({"values": ["only one"]}, "1 slider values for 2 frames"),
    ({"figure_id": "1bad id"}, "figure_id"),
    ({"x_range": (1, 0)}, "low < high"),
    ({"start": 5}, "start"),
    ({"frames": [{"series": [{"kind": "vline", "x": float("inf")}]}] * 2}, "finite"),
])
def test_bad_figures_are_refused_by_name(change, message):
    args = {"frames": _frames(), "values": ["a", "b"], "figure_id": "f", "x_range": (0, 1), "start": 0}
    args.update(change)
    frames, values = args.pop("frames"), args.pop("values")
    with pytest.raises(ValueError, match=re.escape(message)):
        slider_figure(frames, values, slider_label="s", y_range=(0, 1), **args)


def test_the_figure_module_is_not_an_experiment_runner():
    assert "interactive" not in available()
