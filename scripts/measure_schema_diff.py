"""How far the breaking-change differ's verdicts hold, measured on generated schema pairs: for each
policy and direction, how many verdicts called compatible have a separating instance (unsound: must
be 0), and how many called breaking have none the search finds (an upper bound on false breaks: the
finite search misses some real separations).

    PYTHONPATH=. .venv/bin/python scripts/measure_schema_diff.py [--pairs 1000]

The pairs, the search and the confirmation by python-jsonschema are the oracle test's
(tests/codegen/test_schema_diff_oracle.py); this prints the counts instead of failing on the first
unsound verdict.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, given, settings

from evidencekit.codegen._schema_diff import POLICIES, diff_schemas
from tests.codegen.test_schema_diff_oracle import candidates, pairs, separating


def measure(count: int) -> dict[tuple[str, str, str, str], int]:
    found: Counter[tuple[str, str, str, str]] = Counter()

    @settings(max_examples=count, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(pair=pairs())
    def run(pair: tuple[Any, Any]) -> None:
        old, new = pair
        pool = candidates(old, new)
        for direction, source, target in (("request", old, new), ("response", new, old)):
            separable = bool(separating(source, target, pool))
            for policy in POLICIES:
                changes = diff_schemas(old, new, direction, policy)  # type: ignore[arg-type]
                assumed = policy == "lenient" and any("lenient:" in change.detail for change in changes)
                verdict = "breaking" if any(change.breaking for change in changes) else \
                    ("assumed" if assumed else "compatible")
                found[(policy, direction, verdict, "separable" if separable else "none found")] += 1
                if verdict == "compatible" and separable:
                    print("UNSOUND", policy, direction, json.dumps(old), json.dumps(new))

    run()
    return dict(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=1000)
    args = parser.parse_args()
    found = measure(args.pairs)
    print(f"{args.pairs} generated pairs, each judged in both directions\n")
    print("| policy | direction | unsound | breaking with no separating instance found |")
    print("|---|---|---:|---:|")
    for policy in POLICIES:
        for direction in ("request", "response"):
            counts = {(verdict, separable): number for (p, d, verdict, separable), number in found.items()
                      if (p, d) == (policy, direction)}
            unsound = counts.get(("compatible", "separable"), 0)
            flagged = counts.get(("breaking", "none found"), 0)
            clean = counts.get(("compatible", "none found"), 0) + counts.get(("assumed", "none found"), 0)
            share = flagged / (flagged + clean) if flagged + clean else 0.0
            print(f"| {policy} | {direction} | {unsound} | {flagged} of {flagged + clean} ({share:.1%}) |")


if __name__ == "__main__":
    main()
