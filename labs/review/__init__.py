"""The learner's day beyond the checks: hints, reset, review questions and the checklist.

Every sentence a learner reads here comes from a TOML file in this folder,
so the texts can be translated without touching the code.
"""
