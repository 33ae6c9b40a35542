"""``python -m dpcp_tutorial.course.grading SUBMISSIONS --out grades.csv`` (see :mod:`dpcp_tutorial.course.grading`)."""

import sys

from dpcp_tutorial.course.grading import main

if __name__ == "__main__":
    sys.exit(main())
