"""``python -m dpcp_tutorial.grading SUBMISSIONS --out grades.csv`` (see :mod:`dpcp_tutorial.grading`)."""

import sys

from dpcp_tutorial.grading import main

if __name__ == "__main__":
    sys.exit(main())
