"""``python -m funke.pyflink SCRIPT [ARGS...]``: run an unchanged PyFlink script on funke."""

import sys

from funke.pyflink._runner import run_script


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print("usage: python -m funke.pyflink SCRIPT [ARGS...]\n\nRuns an unchanged PyFlink 2.x script on funke (Spark): "
              "its pyflink imports resolve to funke.pyflink.", file=sys.stderr)  # fmt: skip
        raise SystemExit(2)
    run_script(sys.argv[1], sys.argv[2:])


if __name__ == "__main__":
    main()
