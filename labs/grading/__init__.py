"""Grading submissions: the criteria and their points, the pytest plugin, batch grading.

`pytest --lab-tree PATH` grades one tree (see plugin.py); `python -m labs
grade SUBMISSIONS...` grades a class (see batch.py), each hand-in copied once
into the grader's scratch space (hand_in.py). Both use one Grader (grader.py).
"""
