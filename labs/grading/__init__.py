"""Grading submissions: the criteria and their points, the pytest plugin, batch grading.

`pytest --lab-tree PATH` grades one tree (see plugin.py); `python -m labs
grade SUBMISSIONS...` grades a class (see batch.py). Both use one Grader.
"""
