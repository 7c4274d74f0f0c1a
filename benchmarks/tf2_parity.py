"""Every TF 2 fixture through `tf1clip parity` against its TF 1.x original: the whole proof.

    python benchmarks/tf2_parity.py [--only TEXT...] [-j N] [--json FILE] [--markdown FILE]
        [--scratch DIR] [--keep] [--timeout S]

The cases (`cases()`): the recipe goldens (fixtures/tf2_golden/rXX.py against fixtures/legacy/),
the hand-written TF 2 version of every legacy fixture (fixtures/tf2/rXX.py, the recipes' reference
forms), the structure goldens (fixtures/tf2_golden/structures/converted/), one fixture per optimizer-table
row and per Keras-argument rewrite (fixtures/tf2_golden/optimizers/, converted here), and one
small program per construct the translator reads (fixtures/tf2/constructs/, converted here),
less the three whose parity another test holds more strictly (PROVEN_ELSEWHERE).

Each case, in a scratch folder of its own (`prove()`): the TF 1.x program is converted with
`codemods.tf2.convert` unless a committed golden stands for it; a committed golden also runs under
plain `python`, as the user would run it, outside parity's recorder; then `tf1clip parity OLD NEW`
must pass (exit 0). MNIST-reading programs get local synthetic files (fixtures/data/make_mnist.py),
never a download. About 10-25 s a case, two TensorFlow processes each (three for a golden).

tests/test_tf2_parity.py runs a fixed sample of these cases with the same `prove()` on every CI run
(the sample and why it is that sample are written there); this script runs them all, and belongs
to each change of the TF2 tier. A line per case goes to stderr, the table to stdout (and
--markdown), every outcome to --json. Exit status: 0 when every case passed, 1 when one did not,
2 on bad input.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from codemods.tf2 import convert  # noqa: E402
from codemods.tf2.optimizer_table import OPTIMIZERS  # noqa: E402
from realworld.datagen import mnist  # noqa: E402
from realworld.jobs import job_env  # noqa: E402

GOLDEN = ROOT / "fixtures" / "tf2_golden"
LEGACY = ROOT / "fixtures" / "legacy"
HAND = ROOT / "fixtures" / "tf2"
CONSTRUCTS = HAND / "constructs"
KINDS = ("recipe", "hand", "structure", "optimizer", "keras-args", "construct")

# constructs whose TF2-tier output another test runs through parity, with stricter checks
PROVEN_ELSEWHERE = {
    "nce_loss_skipgram.py": "tests/test_parity_samplers.py (losses equal bit for bit)",
    "sampled_softmax_get_variable.py": "tests/test_parity_samplers.py (losses equal bit for bit)",
    "rnn_dropout_wrapper_stack.py": "tests/test_parity_dropout.py (dropout on, and its inverted rate fails)",
}


@dataclass(frozen=True)
class Case:
    id: str
    kind: str
    old: Path  # the TF 1.x program
    golden: Path | None  # the committed TF 2 translation, or None: converted here


@dataclass
class Outcome:
    id: str
    kind: str
    ok: bool
    stage: str  # the last stage reached: convert, plain run, parity
    seconds: float
    detail: str = ""


def cases() -> list[Case]:
    found = [Case(g.stem, "recipe", LEGACY / g.name, g) for g in sorted(GOLDEN.glob("r*.py"))]
    found += [Case("hand-" + h.stem, "hand", LEGACY / h.name, h) for h in sorted(HAND.glob("r*.py"))]
    found += [Case("structure-" + g.stem, "structure", GOLDEN / "structures" / g.name, g)
              for g in sorted((GOLDEN / "structures" / "converted").glob("*.py"))]
    rows = {(ROOT / "fixtures" / row.proof).resolve() for row in OPTIMIZERS.values()}
    for old in sorted((GOLDEN / "optimizers").glob("*.py")):
        kind = "optimizer" if old.resolve() in rows else "keras-args"
        found.append(Case(f"{kind}-{old.stem}", kind, old, None))
    found += [Case("construct-" + old.stem, "construct", old, None) for old in sorted(CONSTRUCTS.glob("*.py"))
              if old.name not in PROVEN_ELSEWHERE]
    return found


def _tail(text: str, n: int = 30) -> str:
    return "\n".join(text.splitlines()[-n:])


def prove(case: Case, work: Path, timeout: float = 600, plain_run: bool = True) -> Outcome:
    """Convert (unless golden), run a golden plainly (`plain_run`), then parity; `work` must be an empty
    folder."""
    start = time.monotonic()

    def done(ok: bool, stage: str, detail: str = "") -> Outcome:
        return Outcome(case.id, case.kind, ok, stage, round(time.monotonic() - start, 1), detail)

    env = job_env(ROOT)
    if case.golden is None:
        result = convert(case.old.read_text(), case.old.name)
        if result.text is None:
            return done(False, "convert", "refused: " + "; ".join(f"line {n.line}: {n.message}" for n in result.notes
                                                                  if n.kind == "human"))
        new = work / case.old.name
        new.write_text(result.text)
    else:
        new = case.golden
    text = new.read_text()
    if "import tf1clip" in text or "from tf1clip" in text:
        return done(False, "convert", "the TF 2 program imports tf1clip")
    reads_mnist = "read_data_sets" in text
    if reads_mnist:
        mnist(work / "MNIST_data")
    if case.golden is not None and plain_run:
        # A committed golden also runs as the user would run it. Its own folder: files it writes (checkpoints)
        # stay out of parity's. For a program converted here, parity's NEW side is that run already.
        plain = work / "plain"
        plain.mkdir()
        if reads_mnist:
            mnist(plain / "MNIST_data")
        proc = subprocess.run([sys.executable, str(new)], cwd=plain, env=env, capture_output=True, text=True,
                              timeout=timeout)
        if proc.returncode != 0:
            return done(False, "plain run", f"exit {proc.returncode}\n{_tail(proc.stderr)}")
    proc = subprocess.run([sys.executable, "-m", "tf1clip", "parity", str(case.old), str(new)], cwd=work, env=env,
                          capture_output=True, text=True, timeout=2 * timeout)
    if proc.returncode != 0:
        return done(False, "parity", f"exit {proc.returncode}\n{_tail(proc.stdout)}\n{_tail(proc.stderr, 15)}")
    return done(True, "parity")


def _markdown(outcomes: list[Outcome], seconds: float) -> str:
    passed = sum(o.ok for o in outcomes)
    lines = [f"TF 2 parity: {passed}/{len(outcomes)} cases pass ({seconds:.0f} s).", "",
             "| kind | cases | pass |", "|---|---|---|"]
    for kind in KINDS:
        mine = [o for o in outcomes if o.kind == kind]
        if mine:
            lines.append(f"| {kind} | {len(mine)} | {sum(o.ok for o in mine)} |")
    failed = [o for o in outcomes if not o.ok]
    if failed:
        lines += ["", "| case | stage | detail |", "|---|---|---|"]
        lines += [f"| {o.id} | {o.stage} | {o.detail.splitlines()[0] if o.detail else ''} |" for o in failed]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", metavar="TEXT", help="cases whose id contains one of these")
    parser.add_argument("-j", type=int, default=1, help="cases run at once (default 1)")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--markdown", type=Path)
    parser.add_argument("--scratch", type=Path, help="folder for the cases' work (default: a temporary one)")
    parser.add_argument("--keep", action="store_true", help="keep each case's folder")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per TensorFlow process (default 600)")
    args = parser.parse_args(argv)
    chosen = [c for c in cases() if not args.only or any(t in c.id for t in args.only)]
    if not chosen:
        print(f"--only {' '.join(args.only)}: no case matches; ids: {', '.join(c.id for c in cases())}",
              file=sys.stderr)
        return 2
    scratch = args.scratch or Path(tempfile.mkdtemp(prefix="tf2-parity-"))
    start, outcomes = time.monotonic(), []

    def one(case: Case) -> Outcome:
        work = scratch / case.id
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        began = time.monotonic()
        try:
            return prove(case, work, args.timeout)
        except subprocess.TimeoutExpired as exc:
            return Outcome(case.id, case.kind, False, "timeout", round(time.monotonic() - began, 1), str(exc))
        finally:
            if not args.keep:
                shutil.rmtree(work, ignore_errors=True)

    with ThreadPoolExecutor(max_workers=max(1, args.j)) as pool:
        futures = [pool.submit(one, case) for case in chosen]
        for future in as_completed(futures):
            out = future.result()
            outcomes.append(out)
            why = f"  {out.stage}: {out.detail.splitlines()[0]}" if not out.ok and out.detail else ""
            print(f"[{len(outcomes)}/{len(chosen)}] {out.id}: {'pass' if out.ok else 'FAIL'} ({out.seconds:.0f} s){why}"
                  [:240], file=sys.stderr, flush=True)
    if not args.keep and args.scratch is None:
        shutil.rmtree(scratch, ignore_errors=True)
    order = {c.id: i for i, c in enumerate(chosen)}
    outcomes.sort(key=lambda o: order[o.id])
    seconds = time.monotonic() - start
    table = _markdown(outcomes, seconds)
    print(table, end="")
    if args.markdown:
        args.markdown.write_text(table)
    if args.json:
        args.json.write_text(json.dumps({"seconds": round(seconds, 1), "outcomes": [asdict(o) for o in outcomes]},
                                        indent=1) + "\n")
    return 0 if all(o.ok for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
