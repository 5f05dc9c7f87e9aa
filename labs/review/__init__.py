"""The learner's loop: the self-check and its total, watch and progress, hints, reset, review
questions and the checklist.

The hints, the questions and the checklist are written in TOML files in this
folder, so they can be translated without touching the code.
"""
