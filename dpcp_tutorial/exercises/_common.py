"""Shared reporting for the exercise checkers."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ExerciseResult:
    """Outcome of a checker: ``passed`` plus the feedback lines printed to the reader."""

    name: str
    passed: bool = True
    feedback: list[str] = field(default_factory=list)

    def fail(self, message: str) -> None:
        """Record a failed case with a specific hint."""
        self.passed = False
        self.feedback.append(message)

    def report(self) -> "ExerciseResult":
        """Print the feedback (or a success line) and return ``self``."""
        if self.passed:
            print(f"{self.name}: all checks passed.")
        else:
            print(f"{self.name}: {len(self.feedback)} problem(s) found:")
            for line in self.feedback:
                print(f"  - {line}")
        return self

    def __bool__(self) -> bool:
        return self.passed

    def _repr_pretty_(self, printer, cycle) -> None:  # keep notebook output to the printed report
        printer.text(f"ExerciseResult(passed={self.passed})")


def run_safely(result: ExerciseResult, fn, *args, **kwargs):
    """Call ``fn``; record an exception as a failed case and return ``None``."""
    try:
        return fn(*args, **kwargs)
    except Exception as exc:  # a reader's bug must become feedback, not a crash
        result.fail(f"your function raised {type(exc).__name__}: {exc}")
        return None
