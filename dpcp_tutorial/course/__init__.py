"""The course tooling: what an instructor needs to teach with the book, built on the library.

==============================  ===========================================================================
module                          what it is for
==============================  ===========================================================================
``exercises``                   the checkers of the chapters' coding exercises (a reader runs them in the
                                notebook: ``from dpcp_tutorial.course.exercises import check_...``)
``grading``                     the batch grader, every checker over a folder of submissions in a sandbox
                                (``python -m dpcp_tutorial.course.grading SUBMISSIONS --out grades.csv``)
``student_edition``             the student edition of the book, without solutions (``make student``)
``make_nbgrader``               an nbgrader course, one assignment per problem set (``make nbgrader``)
``course_load``                 the weekly hours of the course plan, recomputed from the book
``pages``                       the lists of the exercises on the grading and API pages, generated from
                                the checkers
==============================  ===========================================================================

The tooling may import the library (``dpcp_tutorial.*``); the library never imports the tooling
(``tests/test_layers.py``). ``student_edition``, ``make_nbgrader``, ``course_load`` and ``pages`` read the book's
sources, so they run from a clone of the repository (``python -m dpcp_tutorial.course.NAME``; each
module's docstring gives its options).

``dpcp_tutorial.exercises`` and ``dpcp_tutorial.grading`` (and their modules) are other names of the same
modules, for code written before the tooling had a folder of its own.
"""
