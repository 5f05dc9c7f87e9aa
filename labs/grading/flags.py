"""Region code that reaches outside the lesson: flagged for a person to look at.

The host runs in the learner's process, so on memory its answers are
evidence, not proof: a region can import the kit and rewrite what the checks
see, import the solution, or reach the interpreter's internals. The lesson
needs none of that. So every region body (and every import added above the
regions, which grading carries into the spliced copy) is parsed, never run,
and judged by an allowlist (allowlist.py): plain Python, the names its module
already imports, and a short list of standard modules. Anything else is
flagged with the region and the line, and so is a `# type: ignore` or
`# mypy:` comment (which would steer the typecheck).

A flag makes the submission "needs review"; with --strict the criterion the
region serves scores 0 (the typecheck's, for what steers the typecheck).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from labs.checking.rules import CHECK_NUMBERS
from labs.trees.finding import tree_root
from labs.trees.regions import RegionError, parse_regions, read_lines, regions_by_file

from .allowlist import (
    DUNDER_IN_TEXT,
    DUNDERS_ALLOWED,
    HELPERS_REACHING,
    INTERNALS,
    REACHING,
    TYPECHECK_SWITCHES,
    FileRules,
    OutsideError,
    is_dunder,
)
from .parsing import parse
from .splice import top_level_imports

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


def file_flags(
    relative: str, theirs: list[str], shipped: list[str], tree: Path | None = None
) -> list[Flag]:
    """The flags of one file of a submission, against the shipped file and tree (the starter)."""
    try:
        regions = parse_regions(relative, theirs)
        module = parse("\n".join(theirs))
    except (RegionError, SyntaxError, ValueError):
        return []  # a file that does not parse does not import: the checks fail it
    spans = {n: r.check for r in regions for n in range(r.start + 1, r.end)}
    rules = FileRules(relative, shipped, tree or tree_root("starter"))
    rules.bind(module)
    parents = {child: node for node in ast.walk(module) for child in ast.iter_child_nodes(node)}
    found = [
        Flag(relative, line, spans[line], reach.what, reach.typecheck)
        for node in ast.walk(module)
        if (line := getattr(node, "lineno", 0)) in spans
        for reach in reaches(rules, node, parents.get(node))
    ]
    shipped_imports = {text for _, _, text in top_level_imports(shipped)}
    added = {first for first, _, text in top_level_imports(theirs) if text not in shipped_imports}
    found += [
        Flag(relative, statement.lineno, None, reach.what, reach.typecheck)
        for statement in module.body
        if statement.lineno in added
        for node in ast.walk(statement)
        for reach in reaches(rules, node, parents.get(node))
    ]
    for line, comment in comments(theirs):
        if line in spans and STEERING.search(comment):
            what = f"a comment that steers the typecheck: {comment.strip()[:60]}"
            found.append(Flag(relative, line, spans[line], what, typecheck=True))
    return sorted(set(found), key=lambda f: (f.line, f.what))


class Reach(NamedTuple):
    """What one piece of region code does outside what it may use."""

    what: str
    typecheck: bool = False  # it steers the typecheck rather than the checks


def reaches(rules: FileRules, node: ast.AST, parent: ast.AST | None) -> list[Reach]:
    """What one node of region code does outside what it may use."""
    if isinstance(node, ast.Import | ast.ImportFrom):
        return [Reach(what) for what in rules.import_problems(node)]
    if isinstance(node, ast.alias):
        found = name_reaches(node.name, "imports")
        return [Reach(f"imports {node.name}")] if node.name in REACHING else found
    if isinstance(node, ast.Name):
        found = [Reach(f"uses {node.id}")] if node.id in REACHING else name_reaches(node.id)
        if node.id in rules.bound and not is_left_of_a_dot(node, parent):
            found.append(Reach(f"uses the module {rules.bound[node.id]} as a value"))
        return found
    if isinstance(node, ast.Attribute):
        return attribute_reaches(rules, node, parent)
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return name_reaches(node.name, "defines")
    if isinstance(node, ast.MatchClass):
        return [reach for name in node.kwd_attrs for reach in name_reaches(name, "matches")]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        named = [d for d in DUNDER_IN_TEXT.findall(node.value) if d not in DUNDERS_ALLOWED]
        return [Reach(f"names the dunder {named[0]} in a string")] if named else []
    return []


def attribute_reaches(rules: FileRules, node: ast.Attribute, parent: ast.AST | None) -> list[Reach]:
    """What taking one attribute does outside what a region may use."""
    found = name_reaches(node.attr, "reaches")
    if node.attr in HELPERS_REACHING:
        found.append(Reach(f"uses {node.attr}"))
    if node.attr in INTERNALS:
        found.append(Reach(f"reaches the interpreter's internals ({node.attr})"))
    outer = rules.module_of(node.value)
    if outer is not None:
        try:
            target = rules.attribute(outer, node.attr)
        except OutsideError as error:
            return [*found, Reach(str(error))]
        if target is not None and not is_left_of_a_dot(node, parent):
            found.append(Reach(f"uses the module {target} as a value"))
    return found


def name_reaches(name: str, verb: str = "uses") -> list[Reach]:
    """What a name alone says: a switch of the typecheck, or a dunder."""
    if name in TYPECHECK_SWITCHES:
        return [Reach(f"{verb} {name}, so the typecheck would not check the code that runs", True)]
    if is_dunder(name) and name not in DUNDERS_ALLOWED:
        kind = "attribute" if verb == "reaches" else "name"
        return [Reach(f"{verb} the dunder {kind} {name}")]
    return []


def is_left_of_a_dot(node: ast.AST, parent: ast.AST | None) -> bool:
    """Whether node is the `x` of an `x.y`: the one place a module may stand."""
    return isinstance(parent, ast.Attribute) and parent.value is node


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
            shipped_lines = read_lines(original / relative)
            found += file_flags(relative, read_lines(path), shipped_lines, original)
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
            keys = [f"{store}-{n}" for store in ("memory", "postgres") for n in CHECK_NUMBERS]
        for key in keys:
            keyed.setdefault(key, []).append(flag)
    return keyed
