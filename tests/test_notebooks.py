"""Structural checks of every chapter notebook (fast; the notebooks themselves run under nbval).

* The first cell is the hidden install guard; its missing-package branch installs from the
  repository named in ``_config.yml`` (simulated: ``dpcp_tutorial`` made unimportable and
  ``%pip`` recorded instead of run), and its normal branch does nothing.
* Every code cell of every notebook under ``book/`` was executed, in order, in one fresh
  kernel, and nothing hides a cell from nbval: the book is built from these committed
  outputs (``execute_notebooks: "off"``) and strict nbval in ``make test`` re-executes every
  notebook and fails when an output differs (a stale notebook); a meta-test proves that this
  nbval configuration catches a stale output.
* Every chapter has learning goals and 3–8 exercises, each with a hidden solution, each
  starting with its kind and difficulty ("(Coding, ★★)"), the first a one-star warm-up by hand.
* Tutorial shape: one "Source notes" box at the end of a chapter holds the
  corrections of the write-ups (links to the appendix appear only there or in a section
  "Reproducing the sources"); no sentence about the book's own history or about how a run
  was made, on any page; figure code collapsible (``hide-input``), never removed; the main line
  of a core chapter (1–6, 9, 10) is at most about 3,000 words of prose, and no proof in it is longer than 250
  words (a longer one is split into lemmas or moved to a proof appendix with a sketch in place).
* Pages a reader can read: visible code lines fit the page (<= 79 characters, also
  in the files included on the reference-implementations page); ``## Summary`` then
  ``## Exercises`` close every chapter, and only hidden solution cells follow; the source
  write-ups are named, never "the seed"; every cited error of a write-up links to the
  appendix book/source_errors.md; every {ref}/{doc} resolves; the instructors' page links
  only to exercises that exist.
"""

from __future__ import annotations

import json
import pathlib
import re
import sys

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb"))
#: every notebook of the book (chapters and computed reference pages): all run under nbval
ALL_NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))


def _load(path):
    return json.loads(path.read_text(encoding="utf-8"))


def _source(cell) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _repository_url() -> str:
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    return config["repository"]["url"]


def test_there_are_chapters():
    assert NOTEBOOKS, "no chapter notebooks found under book/"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_first_cell_is_hidden_install_guard(path):
    cell = _load(path)["cells"][0]
    assert cell["cell_type"] == "code"
    assert "remove-cell" in cell.get("metadata", {}).get("tags", [])
    source = _source(cell)
    assert "import dpcp_tutorial" in source and "%pip install" in source
    assert _repository_url().removeprefix("https://") in source, "install URL must match _config.yml repository.url"


def _run_guard(source: str, package_importable: bool) -> list[str]:
    """Execute the guard cell as IPython would; return the recorded %pip calls."""
    from IPython.core.inputtransformer2 import TransformerManager

    code = TransformerManager().transform_cell(source)
    calls: list[str] = []

    class FakeShell:
        def run_line_magic(self, name, line):
            calls.append(f"%{name} {line}")
            sys.modules.pop("dpcp_tutorial", None)  # "installed": importable again

    saved = sys.modules.get("dpcp_tutorial")
    try:
        if not package_importable:
            sys.modules["dpcp_tutorial"] = None  # makes `import dpcp_tutorial` raise ImportError
        exec(compile(code, "<guard>", "exec"), {"get_ipython": lambda: FakeShell()})
    finally:
        if saved is not None:
            sys.modules["dpcp_tutorial"] = saved
    return calls


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_install_guard_branches(path):
    source = _source(_load(path)["cells"][0])
    assert _run_guard(source, package_importable=True) == []
    calls = _run_guard(source, package_importable=False)
    assert len(calls) == 1 and calls[0].startswith("%pip install")
    assert "git+" + _repository_url() in calls[0]


@pytest.mark.parametrize("path", ALL_NOTEBOOKS, ids=lambda p: p.name)
def test_executed_in_order_in_one_kernel(path):
    nb = _load(path)
    counts = [c.get("execution_count") for c in nb["cells"] if c["cell_type"] == "code" and _source(c).strip()]
    assert None not in counts, "some code cells were never executed: run `make execute NB=...`"
    assert counts == list(range(1, len(counts) + 1)), "cells were not run top to bottom in one fresh kernel"
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    for cell in nb["cells"]:
        for output in cell.get("outputs", []):
            assert output.get("output_type") != "error", "a committed output is an error"
            if output.get("output_type") == "stream":
                assert output.get("name") != "stderr", "a cell printed to stderr (warnings fail the build)"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_learning_goals_and_exercises(path):
    text = "\n".join(_source(c) for c in _load(path)["cells"] if c["cell_type"] == "markdown")
    assert "Learning goals" in text
    exercises = re.findall(r"`{3,}\{exercise\}", text)
    solutions = re.findall(r"`{3,}\{solution\} *(\S+)\s*\n:class: dropdown", text)
    labels = re.findall(r"`{3,}\{exercise\}[^\n]*\n:label: *(\S+)", text)
    assert 3 <= len(exercises) <= 8, f"{len(exercises)} exercises; each chapter needs 3 to 8"
    assert sorted(solutions) == sorted(labels), "every exercise needs a hidden (dropdown) solution"


# --- pages a reader can read -----------------------------------------------------------

MAX_CODE_LINE = 79
HIDDEN_TAGS = {"remove-cell", "remove-input", "hide-input"}
MD_PAGES = sorted((ROOT / "book").glob("*.md"))


def _tags(cell) -> set[str]:
    return set(cell.get("metadata", {}).get("tags", []))


def _markdown(path) -> str:
    return "\n".join(_source(c) for c in _load(path)["cells"] if c["cell_type"] == "markdown")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_visible_code_lines_fit_the_page(path):
    long = [(i, line) for i, c in enumerate(_load(path)["cells"])
            if c["cell_type"] == "code" and not _tags(c) & HIDDEN_TAGS
            for line in _source(c).splitlines() if len(line) > MAX_CODE_LINE]
    assert not long, f"visible code lines longer than {MAX_CODE_LINE} characters (cell, line): {long}"


def _included_files():
    page = (ROOT / "book" / "reference_implementations.md").read_text(encoding="utf-8")
    return [ROOT / "book" / name for name in re.findall(r"\{literalinclude\}\s*(\S+)", page)]


def test_reference_implementation_lines_fit_the_page():
    files = _included_files()
    assert files, "reference_implementations.md includes no files"
    long = [(f.name, n) for f in files for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1)
            if len(line) > MAX_CODE_LINE]
    assert not long, f"lines longer than {MAX_CODE_LINE} characters (file, line): {long}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_summary_then_exercises_last(path):
    cells = _load(path)["cells"]
    headings = [(i, h) for i, c in enumerate(cells) if c["cell_type"] == "markdown"
                for h in re.findall(r"^## +(.+?)\s*$", _source(c), re.M)]
    assert [h for _, h in headings[-2:]] == ["Summary", "Exercises"], \
        f"the last two sections must be '## Summary' then '## Exercises', got {[h for _, h in headings[-2:]]}"
    after = cells[headings[-1][0] + 1:]
    if after and after[-1]["cell_type"] == "markdown" and SOURCE_NOTES.fullmatch(_source(after[-1]).strip()):
        after = after[:-1]  # the chapter's closing "Source notes" box
    shown = [i for i, c in enumerate(after) if not {"remove-cell", "solution"} <= _tags(c)]
    assert not shown, ("cells after the Exercises must be hidden solution cells (tags remove-cell and solution), "
                       "then at most one markdown cell holding only the 'Source notes' box")


SEED_JARGON = re.compile(r"\bthe seed\b|\bseed (?:error|post|claim|write-ups?)\b|\bseed's\b|\bS\d{1,2}\)", re.I)


@pytest.mark.parametrize("path", NOTEBOOKS + MD_PAGES, ids=lambda p: p.name)
def test_sources_are_named_not_seed(path):
    """Reader-facing text says "the DPCP write-up"/"the medians write-up", never "the seed"."""
    if path.suffix == ".ipynb":
        text = "\n".join(_source(c) for c in _load(path)["cells"]
                         if c["cell_type"] == "markdown" or not _tags(c) & HIDDEN_TAGS)
    else:
        text = path.read_text(encoding="utf-8")
    found = sorted(set(m.group(0) for m in SEED_JARGON.finditer(text)))
    assert not found, f"undefined 'seed' jargon: {found}; see book/source_errors.md"


def _all_text():
    texts = {p.name: _markdown(p) for p in ALL_NOTEBOOKS}
    texts.update({p.name: p.read_text(encoding="utf-8") for p in MD_PAGES})
    return texts


def _labels(texts) -> set[str]:
    labels = set()
    for text in texts.values():
        labels |= set(re.findall(r"^\(([\w-]+)\)=\s*$", text, re.M))
        labels |= set(re.findall(r"^:label: *([\w-]+)\s*$", text, re.M))
    return labels


def _targets(role: str, text: str) -> list[str]:
    return [m.group(2) or m.group(3)
            for m in re.finditer(r"\{" + role + r"\}`(?:([^`<]*)<([^`>]+)>|([^`<]+))`", text)]


def test_every_reference_resolves():
    """Every {ref}/{prf:ref}/{numref} names a label and every {doc} a page in the book."""
    texts = _all_text()
    labels = _labels(texts)
    pages = {p.stem for p in ALL_NOTEBOOKS + MD_PAGES}
    missing = [(name, t) for name, text in texts.items()
               for role in ("ref", "prf:ref", "numref") for t in _targets(role, text)
               if t.strip() not in labels]
    missing += [(name, t) for name, text in texts.items() for t in _targets("doc", text)
                if t.strip().split("/")[-1] not in pages]
    assert not missing, f"unresolved references (page, target): {missing}"


def test_source_errors_page_is_complete():
    """The appendix defines err-d1..d16 and err-m1..m20, and every cited error links to it."""
    page = (ROOT / "book" / "source_errors.md").read_text(encoding="utf-8")
    defined = set(re.findall(r"^\((err-[dm]\d+)\)=\s*$", page, re.M))
    assert defined == {f"err-d{k}" for k in range(1, 17)} | {f"err-m{k}" for k in range(1, 21)}
    for name, text in _all_text().items():
        if name == "source_errors.md":
            continue
        cited = re.findall(r"\berror ([DM]\d+)\b", text)
        linked = re.findall(r"\{ref\}`[^`<]*\berror ([DM]\d+) *<err-([dm]\d+)>`", text)
        assert all(a.lower() == b for a, b in linked), f"{name}: error number and label disagree: {linked}"
        assert sorted(cited) == sorted(a for a, _ in linked), \
            f"{name}: every 'error Dk/Mk' must be a {{ref}} link to the appendix: {cited} vs {linked}"


def test_instructor_assignments_link_existing_exercises():
    texts = _all_text()
    exercise_labels = set()
    for p in ALL_NOTEBOOKS:   # chapters, and reference pages with the exercises on source variants
        exercise_labels |= set(re.findall(r"`{3,}\{exercise\}[^\n]*\n:label: *([\w-]+)", texts[p.name]))
    page = texts["for_instructors.md"]
    linked = [t for t in _targets("ref", page) if t.startswith("ex-")]
    assert len(linked) >= 8, "the assignments must link to the exercises they use"
    assert set(linked) <= exercise_labels, f"links to exercises that do not exist: {set(linked) - exercise_labels}"


def test_answer_key_covers_every_exercise():
    """book/answer_key.md (instructor edition only) has an entry linking to every exercise."""
    texts = _all_text()
    exercise_labels = set()
    for p in ALL_NOTEBOOKS:
        exercise_labels |= set(re.findall(r"`{3,}\{exercise\}[^\n]*\n:label: *([\w-]+)", texts[p.name]))
    keyed = set(_targets("ref", texts["answer_key.md"]))
    assert exercise_labels <= keyed, f"exercises without an answer-key entry: {sorted(exercise_labels - keyed)}"


# --- the book is built from committed outputs that nbval proves fresh ------------------

NBVAL_MARKERS = re.compile(r"NBVAL_(?:IGNORE_OUTPUT|SKIP|RAISES_EXCEPTION|CHECK_OUTPUT)")


def _toc_files() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]
    for part in toc.get("parts", []):
        files += [c["file"] for c in part.get("chapters", [])]
    return files


def test_build_uses_committed_outputs_and_nbval_covers_every_notebook():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert config["execute"]["execute_notebooks"] == "off", \
        "the book is built from the committed outputs; re-execution is nbval's job in `make test`"
    notebooks = [f for f in _toc_files() if (ROOT / f"{f}.ipynb").is_file()]
    assert notebooks and all(f.startswith("book/") for f in notebooks), \
        "every notebook of the book must live under book/, the folder nbval runs"
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^NBVAL := --nbval ", makefile, re.M), "make test must run strict nbval (not --nbval-lax)"
    assert re.search(r"^pytest-all:.*\n(\t.*\n)*\t.*\$\(NBVAL\) book tests", makefile, re.M), \
        "make test must run nbval on book/"


@pytest.mark.parametrize("path", ALL_NOTEBOOKS, ids=lambda p: p.name)
def test_no_cell_is_hidden_from_nbval(path):
    hidden = [i for i, c in enumerate(_load(path)["cells"]) if c["cell_type"] == "code"
              and (NBVAL_MARKERS.search(_source(c)) or any(t.startswith(("nbval-", "raises-exception"))
                                                           for t in c.get("metadata", {}).get("tags", [])))]
    assert not hidden, f"cells {hidden} are skipped or not compared by nbval: a stale output there goes unseen"


def _notebook(cells: list[tuple[str, list]]) -> dict:
    import nbformat
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    for count, (source, outputs) in enumerate(cells, 1):
        cell = nbformat.v4.new_code_cell(source)
        cell.execution_count = count
        cell.outputs = [nbformat.v4.new_output("execute_result", {"text/plain": text}, execution_count=count)
                        for text in outputs]
        nb.cells.append(cell)
    return nb


@pytest.mark.slow
@pytest.mark.parametrize("committed, stale", [("4", False), ("5", True), ("0.30000000000000004", False)])
def test_nbval_configuration_catches_a_stale_output(tmp_path, committed, stale):
    """Strict nbval with the project's sanitiser fails on an output that a fresh run does not print."""
    import subprocess

    import nbformat
    source = "2 + 2" if committed in ("4", "5") else "0.1 + 0.2"
    path = tmp_path / "stale.ipynb"
    nbformat.write(_notebook([(source, [committed])]), path)
    result = subprocess.run([sys.executable, "-m", "pytest", "--nbval", "-p", "no:cacheprovider", "-q",
                             "--nbval-sanitize-with", str(ROOT / "tests" / "nbval_sanitize.cfg"), str(path)],
                            capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert (result.returncode != 0) == stale, result.stdout[-2000:]


# Outputs that compare equal on every CPU. BLAS kernels (OpenBLAS picks one per CPU: Haswell,
# SkylakeX, ARM, ...) sum in different orders, so a result can differ in its last few bits
# (about 1e-13 relative). Every float that a notebook glues or prints therefore carries at most
# MAX_SIGNIFICANT_DIGITS significant digits; the chapters' `glue` helper rounds to that. A
# cell tagged `exact-floats` may print a full repr when its floats come from IEEE-754 scalar
# arithmetic alone (+ - * / of Python floats), which every conforming CPU computes identically.
# `make nbval-portable` re-runs strict nbval under two OpenBLAS kernels.

MAX_SIGNIFICANT_DIGITS = 8
FLOAT_TOKEN = re.compile(r"(?<![\w.])(?:\d+\.\d*|\.\d+)(?:[eE][-+]?\d+)?")


def _significant_digits(token: str) -> int:
    """Digits from the first to the last non-zero one: 16000000000.0 has 2, 0.30000000000000004 has 17."""
    mantissa = re.split(r"[eE]", token)[0].replace(".", "")
    return len(mantissa.strip("0")) or 1


def _output_texts(output) -> list[str]:
    texts = ["".join(output["text"]) if isinstance(output.get("text"), list) else output.get("text", "")]
    for mime, value in output.get("data", {}).items():
        if not mime.startswith("image/"):
            texts.append("".join(value) if isinstance(value, list) else str(value))
    return texts


def _noisy_floats(nb) -> list[tuple[int, str]]:
    """(cell index, token) of every output float with more than MAX_SIGNIFICANT_DIGITS digits."""
    return [(i, token) for i, cell in enumerate(nb["cells"])
            if cell["cell_type"] == "code" and "exact-floats" not in _tags(cell)
            for output in cell.get("outputs", []) for text in _output_texts(output)
            for token in FLOAT_TOKEN.findall(text) if _significant_digits(token) > MAX_SIGNIFICANT_DIGITS]


@pytest.mark.parametrize("path", ALL_NOTEBOOKS, ids=lambda p: p.name)
def test_outputs_carry_no_floating_point_noise(path):
    noisy = _noisy_floats(_load(path))
    assert not noisy, (f"outputs with more than {MAX_SIGNIFICANT_DIGITS} significant digits differ between "
                       f"CPUs (glue through the chapter's rounding `glue`, print with a format): {noisy[:8]}")


#: what myst-nb renders; anything else (a plotting library's JSON, a widget's state) builds without a
#: warning, because _config.yml silences unknown mime types for glue, and shows an empty figure
RENDERED_MIME_TYPES = ("text/plain", "text/html", "image/png", "application/papermill.record/")


@pytest.mark.parametrize("path", ALL_NOTEBOOKS, ids=lambda p: p.name)
def test_outputs_are_of_kinds_the_book_renders(path):
    unknown = sorted({mime for cell in _load(path)["cells"] for output in cell.get("outputs", [])
                      for mime in output.get("data", {}) if not mime.startswith(RENDERED_MIME_TYPES)})
    assert not unknown, f"outputs the book cannot render (emit text/html or image/png instead): {unknown}"


@pytest.mark.parametrize("text, noisy", [
    ("1.2650117009367017", True), ("0.37310265347837174", True), ("3.718281828459045e-06", True),
    ("0.30000000000000004", True), ("array([0.12345679, 1.5])", False), ("1.2650117", False),
    ("eps = 1e-06, n = 123456789012", False), ("16000000000.0", False), ("1.5000000000", False), ("python 3.11.7", False), ("0.000012345678", False),
])
def test_float_noise_check_flags_full_precision_floats(text, noisy):
    nb = _notebook([("x", [text])])
    assert bool(_noisy_floats(nb)) == noisy
    nb.cells[0].metadata["tags"] = ["exact-floats"]
    assert not _noisy_floats(nb)


# --- the tutorial shape -----------------------------------------------------------------

EXERCISE_KIND = re.compile(r"^\((Conceptual|By hand|Derivation|Coding|Project), (★{1,3})\)")
CORE_CHAPTERS = ("01_", "02_", "03_", "04_", "05_", "06_", "09_", "10_", "17_")
MAIN_LINE_WORDS = 3000  # "about 3,000 words" of prose
PROOF_WORDS = 250  # the longest proof in a core chapter's main line (words as `wc -w` counts them)
SOURCE_NOTES = re.compile(r"^(`{3,}|:{3,})\{admonition\} *Source notes[^\n]*\n.*?^\1[ \t]*$", re.S | re.M)
OUT_OF_MAIN_LINE = ("Pitfalls", "Reproducing the sources")


def _exercises(path) -> list[tuple[str, str]]:
    """(label, first line of the body) of every exercise, in order."""
    out = []
    for m in re.finditer(r"^(`{3,}|:{3,})\{exercise\}[^\n]*\n((?::[\w-]+:[^\n]*\n)*)\s*(.*?)^\1[ \t]*$",
                         _markdown(path), re.S | re.M):
        label = re.search(r":label: *(\S+)", m.group(2))
        out.append((label.group(1) if label else "?", m.group(3).strip()))
    return out


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_exercises_state_kind_and_difficulty_and_open_with_a_warm_up(path):
    exercises = _exercises(path)
    assert exercises, "no exercises found"
    unlabelled = [label for label, body in exercises if not EXERCISE_KIND.match(body)]
    assert not unlabelled, ("every exercise starts with its kind and difficulty, e.g. '(Coding, ★★)' "
                            f"(kinds: Conceptual, By hand, Derivation, Coding, Project): {unlabelled}")
    kind, stars = EXERCISE_KIND.match(exercises[0][1]).groups()
    assert (kind, stars) == ("By hand", "★"), \
        f"the first exercise is a one-star warm-up by hand, got ({kind}, {stars})"


def _sections(text: str) -> list[tuple[str, str]]:
    """Split markdown at level-2 headings into (heading, body) pairs (heading '' before the first)."""
    parts = re.split(r"^## +(.+?)\s*$", text, flags=re.M)
    return [("", parts[0])] + list(zip(parts[1::2], parts[2::2]))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_source_notes_in_one_box_at_the_end(path):
    cells = [c for c in _load(path)["cells"] if c["cell_type"] == "markdown"]
    text = "\n".join(_source(c) for c in cells)
    boxes = SOURCE_NOTES.findall(text)
    assert len(boxes) <= 1, "one 'Source notes' box per chapter"
    if boxes:
        last = _source(cells[-1])
        assert SOURCE_NOTES.search(last) and last.strip().endswith(SOURCE_NOTES.search(last).group(0).strip()), \
            "the 'Source notes' box is the chapter's last markdown"
    outside = SOURCE_NOTES.sub("", text)
    outside = "".join(body for heading, body in _sections(outside) if heading not in OUT_OF_MAIN_LINE)
    outside = re.sub(r"^(`{3,}|:{3,})\{solution\}.*?^\1[ \t]*$", "", outside, flags=re.S | re.M)
    assert "source_errors" not in outside, \
        "corrections of the write-ups (links to book/source_errors.md) belong in the 'Source notes' box"
    if path.name.startswith(("01_", "02_")):
        assert not re.search(r"write-up", outside, re.I), "chapters 1-2 do not discuss the write-ups in the main line"


#: sentences about the book's own history or about how and where a run was made
HISTORY = re.compile(
    r"earlier (?:version|wording|edition|draft|release)s?\b|previous (?:version|wording|edition)s?\b"
    r"|\bused to (?:report|say|claim|show|use)\b|this (?:chapter|book|page) (?:used to|once|previously)"
    r"|\b(?:two|2)-core\b|\bshared (?:\d-core )?machine\b|\b(?:at|under) (?:low|heavy) load\b|--resume"
    r"|\b(?:was|were) (?:interrupted|resumed)\b|\bversion (?:that )?this book pins\b|\bpinned version\b"
    r"|\bcommitted results were made\b|\bwe (?:fixed|changed|rewrote) (?:this|the) (?:chapter|package)\b",
    re.I)


def _reader_text(path) -> str:
    if path.suffix == ".ipynb":
        return "\n".join(_source(c) for c in _load(path)["cells"] if c["cell_type"] == "markdown")
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize("path", ALL_NOTEBOOKS + MD_PAGES, ids=lambda p: p.name)
def test_voice_no_history_or_run_logistics(path):
    found = sorted({m.group(0) for m in HISTORY.finditer(_reader_text(path))})
    assert not found, (f"write about the material, not about the book's history or how a run was made: {found} "
                       "(provenance lives in the runner's JSON meta and the command the chapter states)")


@pytest.mark.parametrize("path", ALL_NOTEBOOKS, ids=lambda p: p.name)
def test_figure_code_is_collapsible_not_removed(path):
    removed = [i for i, c in enumerate(_load(path)["cells"]) if c["cell_type"] == "code"
               and _tags(c) & {"remove-input", "remove-cell"}
               and any("image/png" in o.get("data", {}) for o in c.get("outputs", []))]
    assert not removed, f"cells {removed} draw a figure with their code removed: tag them hide-input"


def main_line_words(path) -> int:
    """Words of prose in a chapter's main line: markdown without math, solutions, the Source notes
    box and the out-of-main-line sections (Pitfalls, Reproducing the sources)."""
    text = SOURCE_NOTES.sub("", _markdown(path))
    text = re.sub(r"^(`{3,}|:{3,})\{solution\}.*?^\1[ \t]*$", "", text, flags=re.S | re.M)
    text = "".join(body for heading, body in _sections(text) if heading not in OUT_OF_MAIN_LINE)
    text = re.sub(r"\$\$.*?\$\$|\$[^$\n]*\$", " ", text, flags=re.S)
    return len(re.findall(r"[A-Za-z][A-Za-z'-]*", text))


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if p.name.startswith(CORE_CHAPTERS)], ids=lambda p: p.name)
def test_core_chapters_are_tutorial_sized(path):
    words = main_line_words(path)
    assert words <= MAIN_LINE_WORDS, (f"{words} words of prose in the main line (about 3,000 at most): move "
                                      "reference material to its own page")


def main_line_proof_words(path) -> dict[str, int]:
    """Words (whitespace-separated, formulas included) of every proof in a chapter's main line, by the label of
    the statement it proves."""
    text = SOURCE_NOTES.sub("", _markdown(path))
    text = re.sub(r"^(`{3,}|:{3,})\{solution\}.*?^\1[ \t]*$", "", text, flags=re.S | re.M)
    text = "".join(body for heading, body in _sections(text) if heading not in OUT_OF_MAIN_LINE)
    out = {}
    for m in re.finditer(r"^(`{3,}|:{3,})\{prf:proof\}[^\n]*\n(.*?)^\1[ \t]*$", text, re.S | re.M):
        labels = re.findall(r":label: *(\S+)", text[:m.start()])
        out[labels[-1] if labels else f"proof at {m.start()}"] = len(m.group(2).split())
    return out


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if p.name.startswith(CORE_CHAPTERS)], ids=lambda p: p.name)
def test_core_chapter_proofs_are_short(path):
    long = {label: words for label, words in main_line_proof_words(path).items() if words > PROOF_WORDS}
    assert not long, (f"proofs longer than {PROOF_WORDS} words in the main line: {long}; split them into lemmas or "
                      "move them to a proof appendix with a sketch in place")


def test_proof_length_measure_counts_words_of_proofs_only(tmp_path):
    long_proof = " ".join(["word"] * (PROOF_WORDS + 1))
    cells = [{"cell_type": "markdown", "metadata": {}, "source": [
        "```{prf:theorem} T\n:label: thm-x\nA statement.\n```\n\n```{prf:proof}\n" + long_proof + "\n```\n\n"
        "## Pitfalls\n\n```{prf:lemma} L\n:label: lem-y\nS.\n```\n\n```{prf:proof}\n" + long_proof + "\n```\n"]}]
    path = tmp_path / "03_x.ipynb"
    path.write_text(json.dumps({"cells": cells}), encoding="utf-8")
    assert main_line_proof_words(path) == {"thm-x": PROOF_WORDS + 1}
