"""What a program outside this package uses of it: where the trees are, and how one differs
from another.

    finding a tree    REPO_ROOT (the checkout), tree_root (a name or path as a folder),
                      find_tree (a name or path as a Tree, its package and root)
    comparing two     tree_diff (the starter against the solution, file by file)
"""

from __future__ import annotations

from .diff import tree_diff
from .finding import REPO_ROOT, find_tree, tree_root

__all__ = ["REPO_ROOT", "find_tree", "tree_diff", "tree_root"]
