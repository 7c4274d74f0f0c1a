"""`tf1clip run | migrate | parity`: the command line.

Exit codes (the contract scripts rely on): 0 success; 1 "found something" (`--check` would
change files, parity diverged); 2 usage or input error. Errors are one line on stderr;
`--debug` shows the traceback. `run` hands the exit status of the user's script through.
"""
from __future__ import annotations

import sys

from tf1clip.arguments import UsageError

USAGE = """\
usage: tf1clip [--debug] COMMAND ...

commands:
  run [--steps N] [--include PACKAGE]... SCRIPT [ARGS...]
                 run an unmodified TF 1.x script on TF 2.21 (graph mode);
                 --steps N: stop after N updates, exit 0;
                 --include PACKAGE: an installed package gets the TF 1.x face too
  migrate PATH... [--to compat|tf2] [--diff | --inplace | --outtree DIR]
                 [--check] [--report FILE.json] [-j N] [--strategy mirrored|multi_worker]
                 [--verify [--verify-steps N]]
  parity OLD NEW [--steps N] [--rtol R] [--atol A] [--json FILE] [--plot FILE.png]
                 [--no-transfer] [--no-dropout] [--keep] [--root DIR] [--replicas N] [-- ARGS]
                 prove NEW trains like OLD; each side in its own copy of the repository
                 (--root; docs/parity.md)
"""


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = False
    while argv and argv[0] == "--debug":
        debug = True
        argv.pop(0)
    if not argv or argv[0] in ("-h", "--help", "help"):
        sys.stdout.write(USAGE)
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    try:
        if command == "run":
            from tf1clip import runner

            return runner.main(rest, debug=debug)
        if command == "migrate":
            from tf1clip import migrate

            return migrate.main(rest, debug=debug)
        if command == "parity":
            from tf1clip.parity import cli as parity_cli

            return parity_cli.main(rest, debug=debug)
        raise UsageError(f"unknown command {command!r}; expected run, migrate or parity")
    except UsageError as exc:
        print(f"tf1clip: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("tf1clip: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - the one place that turns crashes into one line
        if debug:
            raise
        print(f"tf1clip: internal error: {type(exc).__name__}: {exc} (rerun with --debug for the traceback)",
              file=sys.stderr)
        return 2


def run_main() -> None:
    sys.exit(main())


if __name__ == "__main__":
    run_main()
