"""Region code that reaches outside the lesson: flagged for a person to look at.

The host runs in the learner's process, so on memory its answers are
evidence, not proof: a region can import the kit and rewrite what the checks
see, import the solution, or reach the interpreter's internals. The lesson
needs none of that. So every region body (and every import added above the
regions, which grading carries into the spliced copy) is parsed, never run,
and these are flagged with the region and the line:

- an import of a module outside a short allowlist: the file's own
  top-level imports as shipped, the tree's own modules (relative imports),
  and modules a learner could want there (ALLOWED);
- any dunder attribute (`x.__class__`, `f.__code__`) or dunder name but
  `__name__`;
- the names that reach around the language (REACHING): getattr, exec, open...;
- a `# type: ignore` or `# mypy:` comment (which would steer the typecheck).

A flag makes the submission "needs review"; with --strict the criterion the
region serves scores 0 (the typecheck's, for a comment).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path

from labs.trees.finding import tree_root
from labs.trees.regions import RegionError, parse_regions, read_lines, regions_by_file

from .parsing import parse
from .splice import top_level_imports

ALLOWED = frozenset(
    {
        "__future__",
        "base64",
        "collections",
        "contextlib",
        "dataclasses",
        "datetime",
        "decimal",
        "enum",
        "functools",
        "hashlib",
        "hmac",
        "itertools",
        "json",
        "math",
        "operator",
        "re",
        "secrets",
        "string",
        "threading",
        "time",
        "typing",
        "uuid",
    }
)
REACHING = frozenset(
    {
        "getattr",
        "setattr",
        "delattr",
        "exec",
        "eval",
        "compile",
        "open",
        "globals",
        "locals",
        "vars",
        "__import__",
        "breakpoint",
    }
)
DUNDERS_ALLOWED = frozenset({"__name__"})
STEERING = re.compile(r"#\s*(type:\s*ignore|mypy:)")


@dataclass(frozen=True)
class Flag:
    """One place a region reaches outside the lesson."""

    path: str
    line: int
    check: int | None  # the check its region serves (None: an import above the regions)
    what: str
    typecheck: bool = False  # a comment that steers mypy, not the checks

    def __str__(self) -> str:
        where = f"check {self.check}" if self.check is not None else "an import above its regions"
        return f"{self.path}:{self.line} ({where}): {self.what}"


def allowed_imports(shipped: list[str]) -> set[str]:
    """The top-level modules a file may import: ALLOWED and what the shipped file imports."""
    allowed = set(ALLOWED)
    for _, _, text in top_level_imports(shipped):
        for node in ast.walk(parse(text)):
            if isinstance(node, ast.Import):
                allowed.update(alias.name.partition(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                allowed.add(node.module.partition(".")[0])
    return allowed


def reaches(node: ast.AST, allowed: set[str]) -> str:
    """What one syntax node does that reaches outside the lesson, or ""."""
    if isinstance(node, ast.Import):
        outside = [a.name for a in node.names if a.name.partition(".")[0] not in allowed]
        return f"imports {', '.join(outside)}" if outside else ""
    if isinstance(node, ast.ImportFrom) and node.level == 0:
        module = node.module or ""
        return "" if module.partition(".")[0] in allowed else f"imports {module}"
    if isinstance(node, ast.Attribute) and is_dunder(node.attr):
        return f"reaches the dunder attribute {node.attr}"
    if isinstance(node, ast.Name):
        if node.id in REACHING:
            return f"uses {node.id}"
        if is_dunder(node.id) and node.id not in DUNDERS_ALLOWED:
            return f"uses the dunder name {node.id}"
    return ""


def is_dunder(name: str) -> bool:
    """__x__."""
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def file_flags(relative: str, theirs: list[str], shipped: list[str]) -> list[Flag]:
    """The flags of one file of a submission, against the shipped file's imports."""
    try:
        regions = parse_regions(relative, theirs)
        module = parse("\n".join(theirs))
    except (RegionError, SyntaxError, ValueError):
        return []  # a file that does not parse does not import: the checks fail it
    spans = {n: r.check for r in regions for n in range(r.start + 1, r.end)}
    allowed = allowed_imports(shipped)
    found = []
    for node in ast.walk(module):
        line = getattr(node, "lineno", 0)
        if line in spans and (what := reaches(node, allowed)):
            found.append(Flag(relative, line, spans[line], what))
    shipped_imports = {text for _, _, text in top_level_imports(shipped)}
    for first, _, text in top_level_imports(theirs):
        if text not in shipped_imports:
            for node in ast.walk(parse(text)):
                if what := reaches(node, allowed):
                    found.append(Flag(relative, first, None, what))
    for line, comment in comments(theirs):
        if line in spans and STEERING.search(comment):
            what = f"a comment that steers the typecheck: {comment.strip()[:60]}"
            found.append(Flag(relative, line, spans[line], what, typecheck=True))
    return sorted(set(found), key=lambda f: (f.line, f.what))


def comments(lines: list[str]) -> list[tuple[int, str]]:
    """(line, text) of every comment in a file's lines."""
    try:
        tokens = tokenize.generate_tokens(io.StringIO("\n".join(lines) + "\n").readline)
        return [(t.start[0], t.string) for t in tokens if t.type == tokenize.COMMENT]
    except (tokenize.TokenError, SyntaxError):
        return [(n, line[line.index("#") :]) for n, line in enumerate(lines, 1) if "#" in line]


def region_flags(submission: Path, shipped: Path | None = None) -> list[Flag]:
    """Every flag of a submission's regions (and the imports it added above them)."""
    original = shipped or tree_root("starter")
    found: list[Flag] = []
    for relative in regions_by_file(original):
        path = submission / relative
        if path.is_file():
            found += file_flags(relative, read_lines(path), read_lines(original / relative))
    return found


def criteria_flagged(flags: list[Flag]) -> dict[str, list[Flag]]:
    """criterion key -> the flags that score it 0 under --strict."""
    keyed: dict[str, list[Flag]] = {}
    for flag in flags:
        if flag.typecheck:
            keys = ["typecheck"]
        elif flag.check is not None:
            keys = [f"memory-{flag.check}", f"postgres-{flag.check}"]
        else:  # an added import serves no one check: it may reach any of them
            keys = [f"{store}-{n}" for store in ("memory", "postgres") for n in range(1, 7)]
        for key in keys:
            keyed.setdefault(key, []).append(flag)
    return keyed
