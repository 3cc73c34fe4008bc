"""The table `make bench` ends with: each benchmark records its headline figures (`record`), and
`python benchmarks/figures.py` prints them, one row each with its target and ok or over, under
the machine's load average (a figure measured on a busy machine says so).

The figures go to the JSON-lines file ARMBENCH_BENCH_FIGURES names (`make bench` empties it first);
a benchmark run alone, without it, records nothing.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

FIGURES_ENV = "ARMBENCH_BENCH_FIGURES"


def record(figure: str, value: float, unit: str, target: float | None = None, *, at_least: bool = False) -> None:
    """One figure: its value in `unit` and, when it has one, its target (at most, or `at_least`)."""
    path = os.environ.get(FIGURES_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as figures:
            figures.write(json.dumps({"figure": figure, "value": value, "unit": unit, "target": target,
                                      "at_least": at_least}) + "\n")


def shown(value: float, unit: str) -> str:
    amount = f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"
    return f"{amount}{unit}" if unit == "x" else f"{amount} {unit}".rstrip()


def table(rows: list[dict]) -> str:
    """Every figure, its target and ok/over, in 80 columns."""
    lines = [f"{'figure':<44} {'value':>12} {'target':>14} {'':>6}", "─" * 79]
    for row in rows:
        target, verdict = "", ""
        if row["target"] is not None:
            bound = "≥" if row["at_least"] else "≤"
            target = f"{bound} {shown(row['target'], row['unit'])}"
            met = row["value"] >= row["target"] if row["at_least"] else row["value"] <= row["target"]
            verdict = "ok" if met else "OVER"
        lines.append(f"{row['figure'][:44]:<44} {shown(row['value'], row['unit']):>12} {target:>14} {verdict:>6}")
    over = sum(line.endswith("OVER") for line in lines)
    load = ", ".join(f"{average:.1f}" for average in os.getloadavg())
    lines += ["─" * 79, f"{len(rows)} figures, {over} over target; load average {load} (1, 5, 15 min) "
              f"on {os.cpu_count()} CPUs"]
    return "\n".join(lines)


def main() -> None:
    path = Path(os.environ.get(FIGURES_ENV, ""))
    if not path.is_file():
        sys.exit(f"{FIGURES_ENV} names no file of figures")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    print(table(rows))


if __name__ == "__main__":
    main()
