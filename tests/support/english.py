"""Finding English prose left in text that should read in Chinese.

Three or more English words in a row are a sentence (or part of one) someone
forgot to translate. Words go on across numbers, punctuation and single spaces;
a Chinese character, a symbol, a line break or a gap of two spaces (a table's
next column) ends them.

Code is not prose. Before looking, these become neutral, neither counted nor
ending a run: `backticked` spans, quoted values, URLs, `python -m <module>`,
{choices}, $VARIABLES, --flags, UPPER_CASE names, paths and dotted or
snake_case identifiers, hyphenated-keys, and the words a caller keeps (the
run statuses always: they are the API's spelling in every language).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# Not prose whatever the language: the run statuses, as the API and the tables spell them.
STATUS_NAMES = frozenset(("pending", "running", "streaming", "done", "failed", "cancelled"))

CODE = re.compile(
    r"""
      `[^`\n]*`                          # `python -m labs review`
    | (?<!\w)'[^'\n]*'(?!\w)             # 'quoted values' and reprs (not an apostrophe's)
    | "[^"\n]*" | “[^”\n]*”              # "quoted values"
    | \b\w+://\S+                        # URLs
    | python\ -m\ [\w.]+                 # the program: python -m labs, python -m starter
    | \{[^{}\n]*\}                       # choices {memory,postgres}, placeholders
    | \$\w+                              # $DATABASE_URL
    | (?<![\w-])--?[A-Za-z][\w-]*        # --store, -h
    | \b[A-Z][A-Z0-9_]*\b                # metavars and names: N, FILE, DATABASE_URL, SQL
    | [\w-]*\w[./_:=@][\w./:=@-]*\w      # files and identifiers: results.json, pg_catalog
    | \b\w+(?:-\w+)+\b                   # hyphenated keys: concurrent-claims, mini-koda
    """,
    re.VERBOSE,
)
TOKEN = re.compile(
    r"(?P<word>[A-Za-z]+(?:['’][A-Za-z]+)*)"  # a word, maybe with an apostrophe: isn't
    r"|(?P<neutral>\x00|\d\w*|\(s\)|[ \t](?![ \t])|[,;:.!?()\[\]\"'…])"  # code, 4xx, (s), " "
    r"|(?P<other>.)",  # anything else ends a run: 中, ✓, →, a second space, a line break
    re.DOTALL,
)


def english_runs(text: str, kept: Iterable[str] = ()) -> list[str]:
    """Each run of 3+ English words in text (the kept ones shown but not counted)."""
    keep = STATUS_NAMES | set(kept)
    found: list[str] = []
    run: list[str] = []
    for token in TOKEN.finditer(CODE.sub("\x00", text) + "\n"):
        if token.lastgroup == "word":
            run.append(token.group())
        elif token.lastgroup == "other":
            if sum(word not in keep for word in run) >= 3:
                found.append(" ".join(run))
            run = []
    return found
