"""The text layer: the learner's language, columns and layout, single keys.

It imports nothing else of the kit, so every package may use it.
"""
