"""What a program outside this package uses of it: where the trees are.

    REPO_ROOT     the checkout
    tree_root     a tree's name or path, as its folder
    find_tree     a tree's name or path, as a Tree: its package and root

The diff of the starter against the solution (diff.py) is imported by name: the learners'
release leaves it out, as it shows the solution, and this module must import there.
"""

from __future__ import annotations

from .finding import REPO_ROOT, find_tree, tree_root

__all__ = ["REPO_ROOT", "find_tree", "tree_root"]
