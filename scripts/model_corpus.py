"""The generator over a corpus of real-world JSON Schemas: per schema, whether the model agrees with
the contract and the OpenAPI document validates; then the agreement per construct (markdown).

The corpus and the checks are tests/codegen/model_corpus.py (tests/codegen/test_model_corpus.py
gates on them with fewer instances).

    .venv/bin/python scripts/model_corpus.py [--instances 25] [--draw-seconds 300] [--only SUBSTRING ...]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.codegen.model_corpus import Result, cases, check, table  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--instances", type=int, default=25, help="instances drawn per schema (default 25)")
    parser.add_argument("--only", nargs="*", default=[], help="schemas whose id contains one of these")
    parser.add_argument("--draw-seconds", type=int, default=300,
                        help="give up drawing instances of one schema after this long (default 300)")
    args = parser.parse_args()
    results: list[Result] = []
    selected = [case for case in cases() if not args.only or any(part in case.id for part in args.only)]
    started = time.perf_counter()
    for number, case in enumerate(selected, 1):
        began = time.perf_counter()
        with tempfile.TemporaryDirectory() as scratch:
            result = check(case, Path(scratch), args.instances, args.draw_seconds)
        results.append(result)
        done = result.agreement
        if result.refused:
            print(f"[{number}/{len(selected)}] {case.id}: refused as a contract: {result.refused[:200]}",
                  file=sys.stderr, flush=True)
            continue
        verdict = "ok" if done.agreed == done.valid and not result.openapi else "DISAGREES"
        print(f"[{number}/{len(selected)}] {case.id}: {verdict}; {done.agreed}/{done.valid} instances agree, "
              f"{done.refused}/{done.invalid} mutations refused by the model too, {len(result.notes)} loosened, "
              f"OpenAPI {'valid' if not result.openapi else result.openapi[0]}"
              f"{'; no instances: ' + result.skipped if result.skipped else ''} ({time.perf_counter() - began:.1f}s)",
              file=sys.stderr, flush=True)
        for line in done.disagreements[:3] + [str(note.message) for note in result.notes[:3]]:
            print(f"    {line}", file=sys.stderr)
    print(table(results))
    failed = [r for r in results if r.agreement.agreed != r.agreement.valid or r.openapi]
    print(f"\n{len(results)} schemas, {len(failed)} disagreeing, {time.perf_counter() - started:.0f}s", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
