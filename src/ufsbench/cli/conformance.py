"""``ufsbench conformance DIR``: our ``released`` presets against the authors' code's outputs."""

from __future__ import annotations

import sys
import warnings
from collections import Counter


def _conformance(argv: list[str]) -> None:
    from tabulate import tabulate

    from ufsbench.cli.common import CommandParser
    from ufsbench.conformance import case_files, check_case, load_case, mapping, reference_dir
    from ufsbench.errors import UFSBenchError

    parser = CommandParser(
        prog="ufsbench conformance",
        description="Fit each method's `released` preset on every case file of DIR (outputs of "
                    "the authors' own code, one JSON per method, data set and setting) and "
                    "compare the top-50 and top-100 feature sets. Exit 0 only when every case "
                    "matches.")
    parser.add_argument("directory", nargs="?", help="folder of case files (default: "
                        "$UFSBENCH_REFERENCE_OUTPUTS, else reference-outputs beside $UFSBENCH_DATA)")
    parser.add_argument("--data-dir", help="folder of the cases' .mat files (default: "
                        "$UFSBENCH_DATA)")
    parser.add_argument("--method", action="append", help="only this method (repeatable)")
    args = parser.parse_args(argv)
    directory = args.directory or reference_dir()
    if directory is None:
        raise UFSBenchError("no case folder given and none found: give DIR or set "
                            "UFSBENCH_REFERENCE_OUTPUTS")
    files = case_files(directory)
    cases = [load_case(p) for p in files]
    if args.method:
        cases = [c for c in cases if c["method"] in args.method]
    if not cases:
        raise UFSBenchError(f"no case files (<method>__<dataset>__<setting>.json) in {directory}"
                            + (f" for {', '.join(args.method)}" if args.method else ""))
    rows, matched = [], 0
    raised: Counter[str] = Counter()
    for case in cases:
        if mapping(case["method"]) is None:
            rows.append([case["method"], case["dataset"], case["case_id"].split("__", 2)[-1],
                         "—", "—", "DIFFERS", "no released mapping for this method"])
            continue
        with warnings.catch_warnings(record=True) as caught:
            # The presets keep the authors' iteration counts, so caps are met by design: one
            # summary line per distinct warning after the table, not a line per fit.
            warnings.simplefilter("always")
            result = check_case(case, args.data_dir)
        for w in caught:
            raised[f"{w.category.__name__}: {w.message}"] += 1
        matched += result.match
        rows.append(result.row())
        print(f"  {result.case_id}: {'match' if result.match else 'DIFFERS'}", file=sys.stderr)
    print(tabulate(rows, headers=["method", "data set", "setting", "Jaccard@50", "Jaccard@100",
                                  "result", "compared"]))
    print(f"{matched}/{len(cases)} cases match")
    for message, count in raised.items():
        print(f"ufsbench: {count} warning(s) from the fits: {message}", file=sys.stderr)
    sys.exit(0 if matched == len(cases) else 1)
