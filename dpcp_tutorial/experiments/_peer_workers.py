"""Tasks of the ``peers`` runner that run in another interpreter (Apache Beam, Tumult Analytics on Spark).

Apache Beam and Tumult Analytics pin versions of pyarrow, NumPy and pandas that
differ from the book's, so the ``peers`` runner (:mod:`.peers`) can run these
tasks with another Python (``--beam-python``, ``--tumult-python``). This file
imports only NumPy and pandas at module level (never ``dpcp_tutorial``), so it
runs by path in an environment that has just the peer installed::

    PY path/to/_peer_workers.py '{"task": "tumult_release", "law": "uniform", ...}'

Each task prints one line of JSON (its result) as the last line of stdout.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time

import numpy as np

LAWS = ("uniform", "halfnormal")
HALFNORMAL_BOUND = 4.0        # scores min(|Z| / B, 1): residuals of a Gaussian model, public bound B = 4 sd


def draw_scores(law: str, n: int, key) -> np.ndarray:
    """``n`` scores in [0, 1] from a known law, drawn from ``numpy.random.default_rng(key)``.

    ``"uniform"``: U(0, 1), :math:`F(x) = x`. ``"halfnormal"``: :math:`\\min(|Z|/4, 1)`,
    :math:`F(x) = 2\\Phi(4x) - 1` for :math:`x < 1` (a residual score with a public bound of
    four standard deviations: most mass low, a thin upper tail).
    """
    gen = np.random.default_rng(key)
    if law == "uniform":
        return gen.uniform(size=n)
    if law == "halfnormal":
        return np.minimum(np.abs(gen.standard_normal(n)) / HALFNORMAL_BOUND, 1.0)
    raise ValueError(f"law={law!r} must be one of {LAWS}")


def _pipeline_dp_params(pipeline_dp, percentiles):
    return pipeline_dp.AggregateParams(
        noise_kind=pipeline_dp.NoiseKind.LAPLACE, metrics=[pipeline_dp.Metrics.PERCENTILE(p) for p in percentiles],
        max_partitions_contributed=1, max_contributions_per_partition=1, min_value=0.0, max_value=1.0)


def _pipeline_dp_extractors(pipeline_dp):
    # one record per privacy unit (its own id), one public partition
    return pipeline_dp.DataExtractors(privacy_id_extractor=lambda r: r[0], partition_extractor=lambda r: 0,
                                      value_extractor=lambda r: r[1])


def pipeline_dp_local(scores: np.ndarray, epsilon: float, percentile: float) -> float:
    """PipelineDP's private percentile of ``scores`` through its LocalBackend (one public partition)."""
    import pipeline_dp

    accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=epsilon, total_delta=0.0)
    engine = pipeline_dp.DPEngine(accountant, pipeline_dp.LocalBackend())
    records = list(enumerate(scores.tolist()))
    result = engine.aggregate(records, _pipeline_dp_params(pipeline_dp, [percentile]),
                              _pipeline_dp_extractors(pipeline_dp), public_partitions=[0])
    accountant.compute_budgets()
    ((_, metrics),) = list(result)
    return float(metrics[0])


def pipeline_dp_beam(scores: np.ndarray, epsilon: float, percentile: float) -> float:
    """The same release through PipelineDP's BeamBackend on Beam's DirectRunner (in memory, one worker)."""
    import apache_beam as beam
    import pipeline_dp
    from apache_beam.options.pipeline_options import PipelineOptions

    options = PipelineOptions(["--runner=DirectRunner", "--direct_num_workers=1",
                               "--direct_running_mode=in_memory"])
    with tempfile.TemporaryDirectory() as folder:
        prefix = os.path.join(folder, "release")
        with beam.Pipeline(options=options) as pipeline:
            records = pipeline | beam.Create(list(enumerate(scores.tolist())))
            accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=epsilon, total_delta=0.0)
            engine = pipeline_dp.DPEngine(accountant, pipeline_dp.BeamBackend())
            result = engine.aggregate(records, _pipeline_dp_params(pipeline_dp, [percentile]),
                                      _pipeline_dp_extractors(pipeline_dp), public_partitions=[0])
            accountant.compute_budgets()
            _ = (result | beam.Map(lambda kv: repr(float(kv[1][0]))) | beam.io.WriteToText(prefix))
        lines = []
        for name in sorted(os.listdir(folder)):
            with open(os.path.join(folder, name)) as handle:
                lines += [line.strip() for line in handle if line.strip()]
    (value,) = lines
    return float(value)


def _tumult_measurement(epsilon: float, level: float):
    from tmlt.core.domains.numpy_domains import NumpyFloatDomain
    from tmlt.core.domains.pandas_domains import PandasSeriesDomain
    from tmlt.core.measurements.pandas_measurements.series import NoisyQuantile
    from tmlt.core.measures import PureDP
    from tmlt.core.utils.exact_number import ExactNumber

    return NoisyQuantile(PandasSeriesDomain(NumpyFloatDomain(allow_nan=False)), PureDP(), level, 0.0, 1.0,
                         ExactNumber.from_float(epsilon, round_up=False))


def _spark():
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[1]").appName("dpcp-peers")
             .config("spark.ui.enabled", "false").config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.driver.host", "127.0.0.1").config("spark.sql.shuffle.partitions", "2")
             .config("spark.sql.execution.arrow.pyspark.enabled", "true").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def tumult_session(spark, scores: np.ndarray, epsilon: float, level: float) -> float:
    """Tumult Analytics: a Session on a Spark DataFrame (protected change AddOneRow), one quantile query."""
    import pandas as pd
    from tmlt.analytics import AddOneRow, PureDPBudget, QueryBuilder, Session

    frame = spark.createDataFrame(pd.DataFrame({"score": scores}))
    session = Session.from_dataframe(privacy_budget=PureDPBudget(epsilon), source_id="calibration",
                                     dataframe=frame, protected_change=AddOneRow())
    answer = session.evaluate(QueryBuilder("calibration").quantile("score", level, low=0.0, high=1.0),
                              PureDPBudget(epsilon))
    return float(answer.toPandas().iloc[0, 0])


def run_task(spec: dict) -> dict:
    """Run one task described by ``spec`` and return its JSON-able result."""
    task = spec["task"]
    if task == "beam_time":
        out = []
        for n in spec["sizes"]:
            scores = draw_scores(spec["law"], n, spec["key"] + [n])
            start = time.perf_counter()
            q = pipeline_dp_beam(scores, spec["epsilon"], spec["percentile"])
            out.append({"n": n, "seconds": time.perf_counter() - start, "release": q})
        import apache_beam
        import pipeline_dp

        return {"results": out, "versions": {"apache-beam": apache_beam.__version__,
                                             "pipeline-dp": pipeline_dp.__version__}}
    if task == "tumult_release":
        # the measurement Tumult Analytics compiles a quantile query into, on a pandas Series
        import pandas as pd

        releases = []
        for level in spec["levels"]:
            row = []
            measurement = _tumult_measurement(spec["epsilon"], level)
            for rep in range(spec["reps"]):
                scores = draw_scores(spec["law"], spec["n"], spec["key"] + [rep])
                row.append(float(measurement(pd.Series(scores))))
            releases.append(row)
        import tmlt.core

        return {"versions": {"tmlt.core": getattr(tmlt.core, "__version__", "?")}, "releases": releases,
                "privacy_map_d_in_1": measurement.privacy_function(1).to_float(round_up=True)}
    if task == "tumult_time":
        import tmlt.analytics

        start = time.perf_counter()
        spark = _spark()
        startup = time.perf_counter() - start
        out = []
        for n in spec["sizes"]:
            scores = draw_scores(spec["law"], n, spec["key"] + [n])
            start = time.perf_counter()
            q = tumult_session(spark, scores, spec["epsilon"], spec["level"])
            out.append({"n": n, "seconds": time.perf_counter() - start, "release": q})
        spark.stop()
        return {"results": out, "spark_startup_s": startup,
                "versions": {"tmlt.analytics": getattr(tmlt.analytics, "__version__", "?")}}
    raise ValueError(f"unknown task {task!r}")


if __name__ == "__main__":
    result = run_task(json.loads(sys.argv[1]))
    sys.stdout.write("\n" + json.dumps(result) + "\n")
    sys.stdout.flush()
    os._exit(0)      # Spark's and Beam's non-daemon threads must not keep the process alive
