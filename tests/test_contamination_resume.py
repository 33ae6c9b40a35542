"""The contamination runner resumes an interrupted run from its checkpoint (full-size run)."""

import json
import math

import pytest

from dpcp_tutorial.experiments import contamination

SETTINGS = dict(n=200, dims=(2, 3), runs=2, epsilon=5.0, n_directions=20, chain_runs=1, authors=True,
                compare_directions=10, small_epsilons=(1.0,), small_dims=(2,), show_progress=False)


def _strip(result):
    """The result without wall-clock times (they differ between runs)."""
    return {k: v for k, v in result.items() if k not in ("seconds", "meta")}


@pytest.fixture(scope="module")
def full():
    return contamination.run_experiment(**SETTINGS)


def test_checkpoint_jobs_rebuild_the_summary(full, tmp_path):
    path = tmp_path / "run.json"
    contamination.run_experiment(**SETTINGS, checkpoint=str(path), command="test")
    saved = json.loads(path.read_text())
    assert saved["meta"]["jobs_completed"] == saved["meta"]["jobs"] == 5
    jobs = contamination.jobs_from_checkpoint(saved)
    assert sorted((j["kind"], j["run"]) for j in jobs) == [
        ("authors", 0), ("chains", 0), ("cheap", 0), ("cheap", 1), ("small", 0)]
    assert _strip(saved) == _strip(full)


def test_resume_after_interruption_equals_uninterrupted_run(full, tmp_path, monkeypatch):
    path = tmp_path / "run.json"
    real_job, calls = contamination._job, []

    def dies_at_fourth_job(kind, run, config):
        calls.append(kind)
        if len(calls) == 4:
            raise KeyboardInterrupt
        return real_job(kind, run, config)

    monkeypatch.setattr(contamination, "_job", dies_at_fourth_job)
    with pytest.raises(KeyboardInterrupt):
        contamination.run_experiment(**SETTINGS, checkpoint=str(path), command="first")
    partial = json.loads(path.read_text())
    assert partial["meta"]["jobs_completed"] == 3 and not partial["meta"]["complete"]
    monkeypatch.setattr(contamination, "_job", real_job)
    ran = []
    monkeypatch.setattr(contamination, "_job", lambda k, r, c: ran.append((k, r)) or real_job(k, r, c))
    resumed = contamination.run_experiment(**SETTINGS, checkpoint=str(path), command="second", resume=partial)
    assert len(ran) == 2                                    # only the unfinished jobs ran
    assert _strip(resumed) == _strip(full)
    assert resumed["meta"]["commands"] == ["first", "second"]
    times = resumed["meta"]["seconds_by_invocation"]
    assert len(times) == 2 and resumed["meta"]["seconds"] == pytest.approx(sum(times), abs=0.2)


def test_resume_refuses_a_checkpoint_with_other_settings(tmp_path):
    path = tmp_path / "run.json"
    contamination.run_experiment(**SETTINGS, checkpoint=str(path))
    saved = json.loads(path.read_text())
    other = dict(SETTINGS, epsilon=2.0)
    with pytest.raises(ValueError, match="different settings"):
        contamination.run_experiment(**other, resume=saved)


def test_resume_may_add_runs(tmp_path):
    small = dict(SETTINGS, runs=1, chain_runs=1)
    path = tmp_path / "run.json"
    contamination.run_experiment(**small, checkpoint=str(path))
    grown = contamination.run_experiment(**SETTINGS, resume=json.loads(path.read_text()))
    assert _strip(grown) == _strip(contamination.run_experiment(**SETTINGS))
    with pytest.raises(ValueError, match="may only grow"):
        contamination.run_experiment(**dict(SETTINGS, runs=1, chain_runs=0),
                                     resume=json.loads(path.read_text()))


# --- recomputing some estimators (--only ... --merge) ------------------------------------------------------

def _rows_without(result, methods):
    """Every error/ERMSE row except those of ``methods`` (and the CoinPress settings)."""
    out = {}
    for part in ("errors", "ermse", "ermse_se"):
        out[part] = {s: {m: v for m, v in by.items() if m not in methods} for s, by in result[part].items()}
    small = result.get("small_epsilon") or {}
    for part in ("errors", "ermse", "ermse_se"):
        out["small_" + part] = {k: {m: v for m, v in by.items() if m not in methods}
                                for k, by in small.get(part, {}).items()}
    out["settings"] = {k: v for k, v in result["settings"].items() if k not in ("coinpress_rho", "coinpress_conversion")}
    return out


def test_merge_recomputes_coinpress_at_the_tight_conversion_and_keeps_every_other_row(full):
    cp = list(contamination.COINPRESS_METHODS)
    assert full["settings"]["coinpress_conversion"] == "tight"
    assert full["settings"]["coinpress_rho"] == pytest.approx(5.0 * math.tanh(2.5))
    old = contamination.run_experiment(**SETTINGS, coinpress_conversion="bun-steinke")
    assert old["settings"]["coinpress_rho"] == 12.5
    merged = contamination.merge_methods(old, cp, command="merge", show_progress=False)
    assert _rows_without(merged, cp) == _rows_without(old, cp)                # the other rows, bit for bit
    for part in ("errors", "ermse", "ermse_se"):                               # CoinPress's rows = a full run's
        assert {m: full[part]["contaminated"][m] for m in cp} == {m: merged[part]["contaminated"][m] for m in cp}
        assert full["small_epsilon"][part] == merged["small_epsilon"][part]
    assert merged["ermse"]["contaminated"]["coinpress"] != old["ermse"]["contaminated"]["coinpress"]
    assert merged["settings"]["coinpress_conversion"] == "tight"
    assert merged["settings"]["coinpress_rho"] == full["settings"]["coinpress_rho"]
    assert [m["command"] for m in merged["meta"]["merges"]] == ["merge"]
    again = contamination.merge_methods(merged, ["coinpress"], command="again", show_progress=False)
    assert _strip(again) == _strip(merged) and len(again["meta"]["merges"]) == 2   # idempotent


def test_merge_refuses_what_it_cannot_recompute(full):
    old = contamination.run_experiment(**SETTINGS, coinpress_conversion="bun-steinke")
    with pytest.raises(ValueError, match="recompute every CoinPress estimator"):
        contamination.merge_methods(old, ["coinpress"], show_progress=False)
    with pytest.raises(ValueError, match="choose among"):
        contamination.merge_methods(full, ["private_idd"], show_progress=False)
    with pytest.raises(ValueError, match="choose among"):
        contamination.merge_methods(full, [], show_progress=False)
    with pytest.raises(ValueError, match="incomplete"):
        contamination.merge_methods({**full, "meta": {"complete": False}}, ["coinpress"], show_progress=False)
    with pytest.raises(ValueError, match="conversion"):
        contamination.run_experiment(**dict(SETTINGS, runs=1, chain_runs=0), coinpress_conversion="eps^2/2")
