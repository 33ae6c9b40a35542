"""One privacy account for every release: what ``epsilon`` means, how spends compose (chapters 2, 4, 6).

The rule for ``epsilon``
------------------------
Every estimator and function of the package that takes ``epsilon`` reads it as
the **total** privacy budget of everything it computes from the data passed to
it (``fit``/``calibrate``, or the function's data argument), under its
*primary* neighbour relation, which its docstring names. Budget splits are
**fractions** of that total (``training_share`` of :class:`~dpcp_tutorial.DPCPRegressor`,
``count_share`` of :class:`~dpcp_tutorial.MondrianPrivateConformalClassifier`), never
absolute amounts. A model trained by a DP trainer *outside* the estimator's
own computation (the model of a split pipeline, fitted on another part of the
data) keeps its own budget: it is read from the trainer and shown as its own
part of the account.

After fitting or calibrating, every private estimator exposes ``privacy_``, a
:class:`PrivacyAccount`: the guarantee under **both** neighbour relations
(add/remove: data sets that differ by one record, added or removed;
replace-one: same size, one record replaced), the labelled parts and how they
compose, and what is treated as public. A relation that the proof does not
cover is reported as ``None`` with the reason in ``notes``.

Composition (:class:`PrivacyBudget`)
------------------------------------
Let each spend :math:`s` read a part :math:`P(s)` of the data: either every
record (``part="all"``) or one of disjoint parts :math:`A, B, \\dots` of the
data set. Write :math:`AR(A)`, :math:`RO(A)` for the sums of the
:math:`(\\varepsilon, \\delta)` of the spends that read part :math:`A` under
each relation (sequential composition: the spends on one part may be chosen
adaptively, and their losses add up, deltas included), and :math:`AR(\\ast)`,
:math:`RO(\\ast)` for the spends that read every record.

*Per-record partition* (``partition="per-record"``, the default): each
record's part is a function of the record itself -- a public key (its day, its
user id), or a coin drawn for that record alone -- never of its row position
or of the other records. Then

.. math:: \\mathrm{AR} = AR(\\ast) + \\max_A AR(A), \\qquad
          \\mathrm{RO} = RO(\\ast) + \\max\\Big(\\max_A RO(A),\\ \\max_{A \\ne B} AR(A) + AR(B)\\Big).

*Proof.* Adding (or removing) a record :math:`r` changes only the part that
:math:`r`'s own key selects, by the addition of :math:`r`; every other part is
unchanged, because no other record's part depends on :math:`r`. The spends on
other parts see identical inputs; conditionally on their outputs (which later
spends may use), the spends on :math:`r`'s part :math:`A` see an add/remove
pair and the spends on every record see one too, so the log-ratio of the joint
output is at most :math:`AR(\\ast) + AR(A)` (and the deltas add). With a coin per
record, condition on the coins of the other records; the output law is then a
mixture over :math:`r`'s coin of laws that each satisfy the bound, hence so
does the mixture. Replacing :math:`r` by :math:`r'` (same size): if both keys
select the same part :math:`A`, that part sees a replace-one pair (loss
:math:`RO(A)`); otherwise part :math:`A` loses :math:`r` and part :math:`B`
gains :math:`r'` -- two add/remove pairs on disjoint inputs, loss
:math:`AR(A) + AR(B)`. The spends on every record see a replace-one pair in
both cases. A part that no spend reads contributes 0. :math:`\\square`

*Fixed positional split* (``partition="positional"``): the parts are fixed
ranges of row positions with public sizes (e.g. the first 1000 rows train, the
next 1000 calibrate). Replace-one keeps every record at its position, so one
part sees a replace-one pair: :math:`\\mathrm{RO} = RO(\\ast) + \\max_A RO(A)`.
Add/remove is **not covered**: adding a record shifts every later row into the
next range, so every part downstream can change (a chunk of the calibration
part gains a training record and loses another). The account reports
add/remove as ``None`` with that reason.

Each spend states its guarantee under the budget's primary relation and,
optionally, under the other one. If the other one is not stated, an
add/remove guarantee implies the replace-one guarantee
:math:`(2\\varepsilon, (1+e^{\\varepsilon})\\delta)` (group privacy: a replacement is a
removal followed by an addition), and a replace-one guarantee implies nothing
under add/remove (it says nothing about data sets of different sizes), which is
then reported as not covered.
"""

from __future__ import annotations

import math
import numbers
import textwrap
import warnings
from dataclasses import dataclass, field

from ._validation import check_choice, check_delta, check_epsilon, check_scalar, composite_steps, format_pair

__all__ = ["RELATIONS", "PARTITIONS", "ReleaseWarning", "Spend", "PrivacyAccount", "PrivacyBudget",
           "group_privacy"]

RELATIONS = ("add/remove", "replace-one")
PARTITIONS = ("per-record", "positional")

_TOL = 1e-12  # floating slack so that e.g. 0.7 + 0.3 spends a budget of exactly 1.0


class ReleaseWarning(UserWarning):
    """A private release that is legal but probably useless, e.g. a threshold on its public bound.

    Emitted when a released threshold equals its public upper bound
    (:math:`\\hat q = 1`: infinite intervals or prediction sets with every
    label), or when a private median lies in its prior's far tail. The
    condition is a function of the release and of public inputs only, so the
    warning is post-processing of the release and costs no privacy.

    Examples
    --------
    A pipeline that must never publish a useless release can turn the
    warning into an error:

    >>> import warnings
    >>> from dpcp_tutorial import ReleaseWarning
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("error", ReleaseWarning)
    ...     try:
    ...         warnings.warn("threshold at its public bound", ReleaseWarning)
    ...     except ReleaseWarning as refused:
    ...         print("refused:", refused)
    refused: threshold at its public bound
    """


def _check_relation(relation, name: str = "relation") -> str:
    return check_choice(relation, name, RELATIONS, "'add/remove': data sets that differ by one added or removed "
                        "record; 'replace-one': same size, one record replaced")


def _check_partition(partition) -> str:
    return check_choice(partition, "partition", PARTITIONS, "'per-record': each record's part is a function of the "
                        "record (a public key or a per-record coin); 'positional': fixed public row ranges")


def _other(relation: str) -> str:
    return RELATIONS[1 - RELATIONS.index(relation)]


def _check_pair(pair, name: str, allow_none: bool = True, vacuous: bool = False):
    """An ``(epsilon, delta)`` guarantee: epsilon >= 0 (``inf`` allowed), delta in [0, 1); or None (not covered).

    A delta of 1 is no guarantee at all (every mechanism satisfies it): such a relation is ``None``, not covered.
    ``vacuous=True`` (the primary pair of an account, ``(inf, 1)`` when not covered) also accepts delta = 1.
    """
    if pair is None:
        if allow_none:
            return None
        raise TypeError(f"{name} must be a pair (epsilon, delta)")
    if isinstance(pair, (str, bytes)) or not hasattr(pair, "__len__") or len(pair) != 2:
        raise TypeError(f"{name} must be a pair (epsilon, delta) or None, got {type(pair).__name__}")
    eps, delta = pair
    if isinstance(eps, (numbers.Real,)) and not isinstance(eps, bool) and eps == math.inf:
        eps = math.inf
    else:
        eps = check_scalar(eps, f"{name} epsilon", low=0.0, low_inclusive=True)
    delta = check_scalar(delta, f"{name} delta", low=0.0, high=1.0, low_inclusive=True, high_inclusive=vacuous,
                         hint="a delta of 1 is no guarantee: pass None for a relation that is not covered")
    return float(eps), float(delta)


def covered(pair):
    """``pair``, or ``None`` (not covered) when its delta has reached 1, which is no guarantee."""
    return None if pair is None or pair[1] >= 1.0 else pair


def group_privacy(epsilon: float, delta: float = 0.0) -> tuple[float, float]:
    """Replace-one guarantee implied by an add/remove one: :math:`(2\\varepsilon, (1 + e^{\\varepsilon})\\delta)`.

    A replacement is a removal followed by an addition; composing the two
    add/remove steps gives :math:`P(D) \\le e^{\\varepsilon}(e^{\\varepsilon}P(D'') + \\delta) + \\delta`.
    The delta is capped at 1 (a vacuous guarantee).

    Parameters
    ----------
    epsilon : float
        The add/remove :math:`\\varepsilon`.
    delta : float, default=0.0
        The add/remove :math:`\\delta`.

    Returns
    -------
    (float, float)
        The replace-one :math:`(\\varepsilon, \\delta)`.

    Examples
    --------
    >>> from dpcp_tutorial.accounting import group_privacy
    >>> eps, delta = group_privacy(1.0, 1e-6)
    >>> round(eps, 4), round(delta, 10)
    (2.0, 3.7183e-06)
    """
    eps, delta = _check_pair((epsilon, delta), "the add/remove guarantee", allow_none=False)
    if delta == 0.0:
        return 2.0 * eps, 0.0
    return 2.0 * eps, 1.0 if eps > 700.0 else min(1.0, (1.0 + math.exp(eps)) * delta)


def _fmt(x) -> str:
    return f"{x:.4g}"


@dataclass(frozen=True)
class Spend:
    """One labelled spend: which part of the data it reads and its guarantee under each relation.

    Parameters
    ----------
    label : str
        What was released, e.g. ``"model training"``.
    add_remove, replace_one : (epsilon, delta) or None, default=None
        The spend's guarantee under each relation (``delta < 1``); ``None``
        (the default) when the proof does not cover that relation (a spend
        with neither, e.g. DP-SGD without noise, makes every total it enters
        "not covered").
    part : str, default="all"
        The part of the data set that the spend reads: ``"all"`` (every record)
        or the name of one of disjoint parts (``"training"``, ``"calibration"``, ...).

    Examples
    --------
    >>> from dpcp_tutorial import Spend
    >>> spend = Spend("private quantile", add_remove=(1.0, 0.0), part="calibration")
    >>> spend.under("add/remove")
    (1.0, 0.0)
    """

    label: str
    add_remove: tuple | None = None
    replace_one: tuple | None = None
    part: str = "all"

    def __post_init__(self):
        if not isinstance(self.label, str):
            raise TypeError(f"label must be a string, got {type(self.label).__name__}")
        if not isinstance(self.part, str) or not self.part:
            raise TypeError("part must be a non-empty string ('all' or the name of a disjoint part)")
        object.__setattr__(self, "add_remove", _check_pair(self.add_remove, "add_remove"))
        object.__setattr__(self, "replace_one", _check_pair(self.replace_one, "replace_one"))

    def under(self, relation: str):
        """The ``(epsilon, delta)`` pair under ``relation`` (or None)."""
        return self.add_remove if _check_relation(relation) == "add/remove" else self.replace_one


def _add(a, b):
    if a is None or b is None:
        return None
    return a[0] + b[0], min(1.0, a[1] + b[1])


def _max(pairs):
    """Componentwise max of pairs: each record's guarantee is dominated by it (None if any is None)."""
    pairs = list(pairs)
    if any(p is None for p in pairs):
        return None
    if not pairs:
        return 0.0, 0.0
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def compose(spends, partition: str = "per-record") -> dict:
    """Totals under both relations of a list of :class:`Spend` (the rules of the module docstring).

    Returns
    -------
    dict
        ``{"add/remove": pair or None, "replace-one": pair or None, "reasons": {relation: str}}``.
    """
    partition = _check_partition(partition)
    spends = list(spends)
    reasons = {}
    parts = sorted({s.part for s in spends if s.part != "all"})

    def total(relation, spends_):
        acc = (0.0, 0.0)
        for s in spends_:
            acc = _add(acc, s.under(relation))
        return acc

    shared = {rel: total(rel, [s for s in spends if s.part == "all"]) for rel in RELATIONS}
    per_part = {rel: {p: total(rel, [s for s in spends if s.part == p]) for p in parts} for rel in RELATIONS}
    for rel in RELATIONS:
        missing = [s.label for s in spends if s.under(rel) is None]
        if missing:
            reasons[rel] = f"not covered: {', '.join(repr(m) for m in missing)} states no {rel} guarantee"
    if partition == "positional":
        ar = None if parts else shared["add/remove"]
        if parts:
            reasons["add/remove"] = ("not covered: with a fixed positional split, adding a record shifts every later "
                                     "row into the next part, so several parts change at once; split by a per-record "
                                     "rule (a public key or a coin per record) to cover add/remove")
        ro = _add(shared["replace-one"], _max(per_part["replace-one"].values()))
    else:
        ar = _add(shared["add/remove"], _max(per_part["add/remove"].values()))
        within = _max(per_part["replace-one"].values())
        ars = list(per_part["add/remove"].values())
        if any(p is None for p in ars):
            across = None
        elif ars:
            top = sorted(ars, key=lambda p: p[0], reverse=True)
            second = top[1] if len(top) > 1 else (0.0, 0.0)
            by_delta = sorted((p[1] for p in ars), reverse=True) + [0.0]
            across = (top[0][0] + second[0], min(1.0, by_delta[0] + by_delta[1]))
        else:
            across = (0.0, 0.0)
        ro = _add(shared["replace-one"], _max([within, across]))
        if ro is None and "replace-one" not in reasons:
            reasons["replace-one"] = ("not covered: a record that moves between parts is removed from one part and "
                                      "added to another, and a part states no add/remove guarantee")
    totals = {"add/remove": ar, "replace-one": ro}
    for rel, pair in totals.items():
        if pair is not None and covered(pair) is None:
            totals[rel] = None
            reasons.setdefault(rel, "not covered: the composed delta reaches 1, which is no guarantee")
    return {**totals, "reasons": reasons}


@dataclass(frozen=True)
class PrivacyAccount:
    """The privacy of one release, under both neighbour relations (module :mod:`dpcp_tutorial.accounting`).

    Attributes
    ----------
    epsilon, delta : float
        The guarantee under the primary ``relation`` (``inf``/1 if that
        relation is not covered, which the estimators never produce for their
        primary relation).
    relation : {"add/remove", "replace-one"}
        The primary relation: the one the estimator is designed for.
    add_remove, replace_one : (epsilon, delta) or None, default=None
        The guarantee under each relation (``delta < 1``); ``None`` when the
        proof does not cover it (the reason is in ``notes``). The pair of the
        primary relation must be ``(epsilon, delta)``; left at ``None`` it is
        set to it (unless ``(epsilon, delta) = (inf, 1)``: not covered).
    parts : tuple of Spend, default=()
        The labelled spends, with the part of the data each reads.
    composition : str, default=""
        How the parts compose (sequential on shared records, parallel over
        disjoint parts, and the partition rule that makes that valid).
    public : tuple of str, default=()
        What the statement treats as public (bounds, sizes, label sets, ...).
    chapter : str, default=""
        Where the guarantee is proved.
    notes : tuple of str, default=()
        Reasons for uncovered relations and further remarks.

    Examples
    --------
    >>> from dpcp_tutorial import PrivacyBudget
    >>> budget = PrivacyBudget(epsilon=1.0)
    >>> budget.spend(1.0, 0.0, "private quantile", other=(2.0, 0.0))
    >>> account = budget.account()
    >>> account.add_remove, account.replace_one
    ((1.0, 0.0), (2.0, 0.0))
    """

    epsilon: float
    delta: float
    relation: str
    add_remove: tuple | None = None
    replace_one: tuple | None = None
    parts: tuple = ()
    composition: str = ""
    public: tuple = ()
    chapter: str = ""
    notes: tuple = field(default=())

    def __post_init__(self):
        _check_relation(self.relation)
        eps, delta = _check_pair((self.epsilon, self.delta), "the primary guarantee", allow_none=False,
                                 vacuous=True)
        object.__setattr__(self, "epsilon", eps)
        object.__setattr__(self, "delta", delta)
        object.__setattr__(self, "add_remove", _check_pair(self.add_remove, "add_remove"))
        object.__setattr__(self, "replace_one", _check_pair(self.replace_one, "replace_one"))
        key = "add_remove" if self.relation == "add/remove" else "replace_one"
        primary = getattr(self, key)
        uncovered = (eps, delta) == (math.inf, 1.0)
        if primary is None and not uncovered:
            object.__setattr__(self, key, (eps, delta))
        elif primary is not None and (uncovered or abs(primary[0] - eps) > 1e-12 * max(1.0, eps)
                                      or abs(primary[1] - delta) > 1e-12):
            raise ValueError(f"{key}={primary} contradicts the primary guarantee (epsilon, delta) = ({eps:g}, "
                             f"{delta:g}) under {self.relation}; they must be the same pair (or {key}=None with "
                             "(inf, 1) when the primary relation is not covered)")
        for name in ("composition", "chapter"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"{name} must be a string, got {type(getattr(self, name)).__name__}")
        for name in ("parts", "public", "notes"):
            value = getattr(self, name)
            if not isinstance(value, (tuple, list)):
                raise TypeError(f"{name} must be a tuple (or list), got {type(value).__name__}")
            object.__setattr__(self, name, tuple(value))
        if not all(isinstance(p, Spend) for p in self.parts):
            raise TypeError("parts must be Spend records")
        if not all(isinstance(p, str) for p in self.public + self.notes):
            raise TypeError("public and notes must hold strings")

    def under(self, relation: str):
        """The ``(epsilon, delta)`` pair under ``relation`` (``None`` if not covered)."""
        return self.add_remove if _check_relation(relation) == "add/remove" else self.replace_one

    def __str__(self) -> str:
        lines = [f"Privacy account{f' ({self.chapter})' if self.chapter else ''}: "
                 f"({_fmt(self.epsilon)}, {_fmt(self.delta)})-DP under {self.relation} (primary relation)"]
        rows = [("relation", "epsilon", "delta")]
        for rel in RELATIONS:
            pair = self.under(rel)
            rows.append((rel + (" *" if rel == self.relation else ""),
                         "not covered" if pair is None else _fmt(pair[0]),
                         "" if pair is None else _fmt(pair[1])))
        lines += _table(rows)
        if self.parts:
            lines.append("parts:")
            rows = [("label", "reads", "add/remove", "replace-one")]
            for p in self.parts:    # long labels wrap inside their column
                label = textwrap.wrap(p.label, width=_LABEL_WIDTH, break_on_hyphens=False) or [""]
                rows.append((label[0], p.part, format_pair(p.add_remove), format_pair(p.replace_one)))
                rows += [(more, "", "", "") for more in label[1:]]
            lines += _table(rows, indent="  ")
        if self.composition:
            lines += _wrap("composition: ", self.composition)
        if self.public:
            lines += _wrap("public: ", "; ".join(self.public))
        for note in self.notes:
            lines += _wrap("note: ", note)
        return "\n".join(lines)


_WIDTH = 88          # printed accounts wrap their prose lines at this width
_LABEL_WIDTH = 44    # and the labels of their parts at this one


def _wrap(label: str, text: str) -> list[str]:
    """``label + text`` wrapped at :data:`_WIDTH`, continuation lines indented under the text."""
    return textwrap.wrap(label + text, width=_WIDTH, subsequent_indent=" " * len(label),
                         break_long_words=False, break_on_hyphens=False) or [label.rstrip()]


def _table(rows, indent: str = "  ") -> list[str]:
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    return [indent + "  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]


def _describe(spends, partition: str) -> str:
    parts = sorted({s.part for s in spends if s.part != "all"})
    shared = any(s.part == "all" for s in spends)
    if not parts:
        return "single mechanism" if len(spends) == 1 else "sequential (every spend reads every record)"
    rule = ("per-record rule: each record's part is a function of the record itself, a public key or a coin of "
            "its own" if partition == "per-record" else "fixed public row ranges of public sizes")
    text = f"parallel over the disjoint parts {', '.join(repr(p) for p in parts)} ({rule}); sequential within a part"
    return text + ("; spends on every record compose sequentially with all of them" if shared else "")


def make_account(spends, *, relation: str, partition: str = "per-record", public=(), chapter: str = "",
                 notes=(), composition: str | None = None) -> PrivacyAccount:
    """Build a :class:`PrivacyAccount` from spends (used by every estimator's ``privacy_``)."""
    spends = tuple(spends)
    relation = _check_relation(relation)
    totals = compose(spends, partition)
    primary = totals[relation]
    reasons = tuple(f"{rel}: {why}" for rel, why in totals["reasons"].items())
    if partition == "per-record" and totals["replace-one"] is None and len({s.part for s in spends}) > 1:
        fixed = compose(spends, "positional")["replace-one"]
        if fixed is not None:
            reasons += (f"with a fixed positional split of public sizes instead (a record keeps its part), "
                        f"replace-one is {format_pair(fixed)}",)
    eps, delta = (math.inf, 1.0) if primary is None else primary
    return PrivacyAccount(eps, delta, relation, totals["add/remove"], totals["replace-one"], spends,
                          _describe(spends, partition) if composition is None else composition, tuple(public),
                          chapter, reasons + tuple(notes))


class PrivacyBudget:
    """A budget that composes spends sequentially and in parallel, and reports both relations.

    Parameters
    ----------
    epsilon : float
        Total :math:`\\varepsilon` available under the primary relation (positive).
    delta : float, default=0.0
        Total :math:`\\delta` available, in [0, 1).
    relation : {"add/remove", "replace-one"}, default="add/remove"
        The primary relation: spends are stated, and the budget is enforced,
        under it.
    partition : {"per-record", "positional"}, default="per-record"
        How disjoint parts were formed (module docstring): by a per-record rule
        (default; parallel composition under both relations) or by fixed row
        ranges of public sizes (replace-one only).

    Notes
    -----
    :meth:`spend` refuses a spend that would take the composed total under the
    primary relation beyond the budget, and records nothing then. Spends on
    disjoint parts compose in parallel, so a pipeline that trains a model on
    one part with :math:`\\varepsilon` and calibrates on another with
    :math:`\\varepsilon` spends :math:`\\varepsilon` under add/remove, not :math:`2\\varepsilon`;
    under replace-one (per-record rule) a record can move from one part to the
    other, and the account reports :math:`\\max(RO, AR + AR)` for it.

    Examples
    --------
    >>> budget = PrivacyBudget(epsilon=1.0, delta=1e-6)
    >>> budget.spend(1.0, 1e-6, "model training", part="training")
    >>> budget.spend(1.0, 0.0, "private quantile", part="calibration", other=(1.0, 0.0))
    >>> budget.spent_epsilon
    1.0
    >>> budget.account().replace_one[0]
    2.0
    """

    def __init__(self, epsilon: float, delta: float = 0.0, *, relation: str = "add/remove",
                 partition: str = "per-record"):
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_delta(delta)
        self.relation = _check_relation(relation)
        partition = _check_partition(partition)
        if self.relation == "add/remove" and partition == "positional":
            raise ValueError("a fixed positional split does not compose in parallel under add/remove (adding a "
                             "record shifts every later row into the next part); use partition='per-record' "
                             "(a public key or a coin per record) or relation='replace-one'")
        self.partition = partition
        self._ledger: list[Spend] = []

    @property
    def ledger(self) -> tuple[Spend, ...]:
        """All spends so far, in order."""
        return tuple(self._ledger)

    def _total(self, spends):
        pair = compose(spends, self.partition)[self.relation]
        return (math.inf, 1.0) if pair is None else pair

    @property
    def spent_epsilon(self) -> float:
        """Composed epsilon under the primary relation."""
        return float(self._total(self._ledger)[0])

    @property
    def spent_delta(self) -> float:
        """Composed delta under the primary relation."""
        return float(self._total(self._ledger)[1])

    @property
    def remaining_epsilon(self) -> float:
        """Epsilon still available (never negative)."""
        return max(self.epsilon - self.spent_epsilon, 0.0)

    @property
    def remaining_delta(self) -> float:
        """Delta still available (never negative)."""
        return max(self.delta - self.spent_delta, 0.0)

    def spend(self, epsilon: float, delta: float = 0.0, label: str = "", *, part: str = "all",
              other=None) -> None:
        """Record a spend of ``(epsilon, delta)`` under the primary relation on ``part`` of the data.

        Parameters
        ----------
        epsilon : float
            The spend's :math:`\\varepsilon` under the budget's primary relation.
        delta : float, default=0.0
            The spend's :math:`\\delta` under the budget's primary relation.
        label : str, default=""
            What the spend pays for (shown in the account).
        part : str, default="all"
            ``"all"`` (the spend reads every record) or the name of a disjoint
            part (``"training"``, ``"calibration"``, ...).
        other : (epsilon, delta) or None, default=None
            The guarantee under the other relation. ``None``: group privacy
            :math:`(2\\varepsilon, (1+e^{\\varepsilon})\\delta)` when the primary
            relation is add/remove; not covered when it is replace-one.

        Raises
        ------
        ValueError
            If the composed total would exceed the budget; nothing is recorded then.
        """
        epsilon = check_scalar(epsilon, "epsilon", low=0.0, low_inclusive=True)
        delta = check_delta(delta)
        if not isinstance(label, str):
            raise TypeError(f"label must be a string, got {type(label).__name__}")
        primary = (epsilon, delta)
        if other is None:
            other = covered(group_privacy(epsilon, delta)) if self.relation == "add/remove" else None
        pairs = {self.relation: primary, _other(self.relation): other}
        entry = Spend(label, pairs["add/remove"], pairs["replace-one"], part)
        eps_after, delta_after = self._total(self._ledger + [entry])
        name = label or "this release"
        if eps_after > self.epsilon + _TOL:
            raise ValueError(
                f"spending epsilon={epsilon:.6g} for {name!r} would exceed the budget: the composed total under "
                f"{self.relation} would be {eps_after:.6g} of {self.epsilon:.6g} ({self.spent_epsilon:.6g} spent, "
                f"{self.remaining_epsilon:.6g} left); lower this spend, spend it on a disjoint part, or raise the "
                "total budget"
            )
        if delta_after > self.delta + _TOL * max(self.delta, 1e-300):
            raise ValueError(
                f"spending delta={delta:.3g} for {name!r} would exceed the budget: the composed delta would be "
                f"{delta_after:.3g} of {self.delta:.3g}"
            )
        self._ledger.append(entry)

    def account(self, *, public=(), chapter: str = "", notes=()) -> PrivacyAccount:
        """The :class:`PrivacyAccount` of the spends so far (both relations).

        Parameters
        ----------
        public : tuple of str, default=()
            What the release treats as public (e.g. ``"n"``, the bounds).
        chapter : str, default=""
            The chapter that proves the guarantee.
        notes : tuple of str, default=()
            Further remarks shown with the account.
        """
        return make_account(self._ledger, relation=self.relation, partition=self.partition, public=public,
                            chapter=chapter, notes=notes)

    def __repr__(self) -> str:
        return (f"PrivacyBudget(epsilon={self.epsilon:g}, delta={self.delta:g}, relation={self.relation!r}; spent "
                f"epsilon={self.spent_epsilon:g}, delta={self.spent_delta:g} in {len(self._ledger)} spend(s))")


# ---------------------------------------------------------------------------
# the steps of a model: every step fitted on private data is accounted for, or the model is refused
# ---------------------------------------------------------------------------

_PUBLIC_MARKERS = ("passthrough", "drop")


def declared_relation(estimator) -> str | None:
    """The neighbour relation a DP estimator declares in its class attribute ``relation``, or None.

    An estimator that declares it under the older attribute name ``neighbouring``
    is read too, with a FutureWarning (the class alone decides: the warning is public).
    """
    relation = getattr(estimator, "relation", None)
    if relation is None and getattr(estimator, "neighbouring", None) is not None:
        warnings.warn(f"{type(estimator).__name__} declares its neighbour relation as `neighbouring`; name the "
                      "class attribute `relation` (the old name will be removed)", FutureWarning, stacklevel=3)
        relation = estimator.neighbouring
    return relation if isinstance(relation, str) else None


def _step_kind(step) -> tuple[str, str]:
    """``(kind, why)`` of one leaf step: ``"public"``, ``"dp"`` or ``"leak"`` (the class and settings only)."""
    from sklearn.preprocessing import FunctionTransformer

    try:
        from sklearn.frozen import FrozenEstimator
    except ImportError:        # pragma: no cover - scikit-learn < 1.6
        FrozenEstimator = ()

    if step is None or (isinstance(step, str) and step in _PUBLIC_MARKERS):
        return "public", "no computation"
    if FrozenEstimator and isinstance(step, FrozenEstimator):
        return "public", "frozen: declared fitted on public data"
    if getattr(type(step), "learns_from_data", True) is False:
        return "public", "public constants, learns nothing from the data"
    if isinstance(step, FunctionTransformer):
        if step.check_inverse and step.func is not None and step.inverse_func is not None:
            return "leak", ("a FunctionTransformer with check_inverse=True tests its inverse on the private rows "
                            "when fitted and warns depending on them; pass check_inverse=False")
        return "public", "a fixed function applied to each row"
    if declared_relation(step) in RELATIONS:
        return "dp", "a DP estimator (declares its neighbour relation, reports privacy_)"
    return "leak", (f"{type(step).__name__} is fitted on the data it is given but is not a DP estimator: it "
                    "stores statistics of those records (e.g. a mean and a spread), which no account certifies")


def model_steps(model, name: str = "model") -> list[tuple[str, object, str, str]]:
    """Every leaf step of ``model`` as ``(path, step, kind, why)``, walking nested composites.

    ``kind`` is ``"dp"`` (a DP estimator: it declares ``relation`` and
    reports a ``privacy_`` account after fitting), ``"public"`` (``None``,
    ``"passthrough"``/``"drop"``, a transformer that declares
    ``learns_from_data = False`` such as :class:`~dpcp_tutorial.PublicScaler`,
    a :class:`~sklearn.preprocessing.FunctionTransformer` -- a fixed function,
    which must map each row on its own --, or a
    :class:`~sklearn.frozen.FrozenEstimator`, which declares its estimator
    fitted on public data) or ``"leak"`` (any other fitted step). Only the
    model object is read, never data (chapter 7).
    """
    return _walk(model, name, top=True)


def _walk(model, path: str, top: bool = False):
    children = composite_steps(model)
    if children is None:
        kind, why = _step_kind(model)
        return [(path, model, kind, why)]
    out = []
    for child_name, step in children:
        out.extend(_walk(step, repr(child_name) if top else f"{path} > {child_name!r}"))
    return out


def check_model_privacy(model, owner: str = "the estimator") -> list:
    """Refuse a model that mixes a DP step with a step fitted on private data that no account certifies.

    A model with a DP step claims privacy for the data it is fitted on, so every
    other step must be public (:func:`model_steps`); a model with no DP step
    is a non-private model, whose training data the estimators list as public
    in ``privacy_``. The decision reads the model object only (its classes and
    settings), never data, so it costs no privacy.

    Returns
    -------
    list
        The DP steps ``(path, step)``.

    Raises
    ------
    ValueError
        Naming each leaking step and what to do instead.
    """
    steps = model_steps(model)
    dp = [(path, step) for path, step, kind, _ in steps if kind == "dp"]
    leaks = [(path, why) for path, _, kind, why in steps if kind == "leak"]
    if dp and leaks:
        named = "; ".join(f"step {path}: {why}" for path, why in leaks)
        raise ValueError(
            f"{owner} cannot account for this model: it trains a DP step ({', '.join(p for p, _ in dp)}) on "
            f"private data, but {named}. Fit such a step on public data and pass it prefit (wrap it in "
            "sklearn.frozen.FrozenEstimator, or pass the whole model fitted on public data as "
            "FrozenEstimator(model) with prefit=True), or replace a scaler by dpcp_tutorial.PublicScaler(low, high), "
            "which maps public feature ranges to [-1, 1] and learns nothing from the data (chapter 7)")
    return dp


def public_step_notes(model) -> list[str]:
    """One line per public step of a composite model that computes something (for an account's ``public``)."""
    if composite_steps(model) is None:
        return []
    return [f"model step {path} ({type(step).__name__}): {why}" for path, step, kind, why in model_steps(model)
            if kind == "public" and not (step is None or isinstance(step, str))]


def trainer_account(model) -> PrivacyAccount | None:
    """The account of everything a fitted model learnt from private data; None for a non-private model.

    A bare DP trainer: its own ``privacy_``. A composite model (Pipeline,
    ColumnTransformer, FeatureUnion, nested): refused by
    :func:`check_model_privacy` when a DP step sits beside a step fitted on
    private data that no account certifies; otherwise the ``privacy_`` of its
    one DP step, or the sequential composition of several (they read the same
    records). ``None`` when no step is a DP estimator: the caller lists the
    model's training data as public.
    """
    dp = check_model_privacy(model)
    if not dp:
        return None
    if composite_steps(model) is None:         # a bare model: its own account, or None (the caller says what it needs)
        account = getattr(model, "privacy_", None)
        return account if isinstance(account, PrivacyAccount) else None
    accounts = []
    for path, step in dp:
        account = getattr(step, "privacy_", None)
        if not isinstance(account, PrivacyAccount):
            raise ValueError(f"step {path} ({type(step).__name__}) declares relation={declared_relation(step)!r} "
                             "but reports no privacy_ PrivacyAccount after fitting; fit it first, or give it one")
        accounts.append((path, account))
    if len(accounts) == 1:
        return accounts[0][1]
    spends = [Spend(f"step {path}: {a.parts[0].label if len(a.parts) == 1 else 'DP step'}", a.add_remove,
                    a.replace_one) for path, a in accounts]
    relation = "add/remove" if all(sp.add_remove is not None for sp in spends) else "replace-one"
    return make_account(spends, relation=relation, public=[p for _, a in accounts for p in a.public],
                        notes=[n for _, a in accounts for n in a.notes],
                        composition="sequential: every DP step of the model reads the same training records")


def single_mechanism_account(label: str, add_remove, replace_one=None, *, relation: str = "add/remove",
                             public=(), chapter: str = "", notes=()) -> PrivacyAccount:
    """Account of one mechanism on all records; ``replace_one=None`` with add/remove primary: group privacy."""
    add_remove = _check_pair(add_remove, "add_remove")
    if replace_one is None and add_remove is not None and relation == "add/remove":
        replace_one = covered(group_privacy(*add_remove))
        notes = ("replace-one by group privacy (a replacement is a removal and an addition)",) + tuple(notes)
    return make_account([Spend(label, add_remove, replace_one)], relation=relation, public=public, chapter=chapter,
                        notes=notes)

