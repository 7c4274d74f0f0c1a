"""Run a setup script with Python's and NumPy's random generators seeded: `python seeded.py
SCRIPT [ARGS...]`. A project's data preparation (a random train/test split) then writes the
same files in every fresh tree, so the two sides of a parity run train on the same data."""
import random
import runpy
import sys

if __name__ == "__main__":
    random.seed(0)
    try:
        import numpy
    except ImportError:  # a setup script that needs no NumPy
        pass
    else:
        numpy.random.seed(0)
    sys.argv = sys.argv[1:]
    sys.path[0] = ""  # the script's folder is the working folder, as for `python SCRIPT`
    runpy.run_path(sys.argv[0], run_name="__main__")
