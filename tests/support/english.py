"""Finding English prose left in text that should read in Chinese.

Three or more English words with nothing but numbers, ids and punctuation
between them are a sentence someone forgot to translate. Code is not prose:
`backticked` spans, quoted strings, URLs, flags, upper-case names (SQL, MOCK)
and the lab's status names stand in as neutral tokens, which neither count nor end a run.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# Not prose whatever the language: the run statuses, as the API and the tables spell them.
STATUS_NAMES = ("pending", "running", "streaming", "done", "failed", "cancelled")

CODE = re.compile(
    r"`[^`\n]*`"  # `python -m labs check`
    r"|'[^'\n]*'|\"[^\"\n]*\"|“[^”\n]*”"  # quoted values and reprs
    r"|\b\w+://\S+"  # URLs
    r"|(?<![\w-])--?[\w-]+"  # --flags and -m
    r"|\b\w+(?:[./_]\w+)+"  # module.paths, file/paths, snake_names
)
# A word (lower-case or Capitalised), a neutral token (number, id, ALLCAPS, punctuation), or
# anything else, which ends a run (a Chinese character, an arrow, a symbol).
TOKEN = re.compile(
    r"(?P<word>\b[A-Za-z][a-z]+(?:'[a-z]+)?\b)"
    r"|(?P<neutral>\b\w*\d\w*\b|\b[A-Z]{2,}\b|[ \t,;:.()/=+-]+)"
    r"|(?P<other>.)",
    re.DOTALL,
)


def english_runs(text: str, allowed: Iterable[str] = ()) -> list[str]:
    """Each stretch of 3+ English words in text, outside code and the allowed words."""
    for word in (*STATUS_NAMES, *allowed):
        text = re.sub(rf"\b{re.escape(word)}\b", "0", text)
    text = CODE.sub("0", text)  # neutral: a command between English words is still English
    runs, start, end, words = [], 0, 0, 0
    for token in TOKEN.finditer(text + "·"):
        if token.lastgroup == "word":
            start, words = (token.start(), 0) if words == 0 else (start, words)
            end, words = token.end(), words + 1
        elif token.lastgroup == "other":
            if words >= 3:
                runs.append(text[start:end])
            words = 0
    return runs
