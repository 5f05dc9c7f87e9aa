"""The lab's trees: finding and importing them, their marked regions, their diff and drift."""
