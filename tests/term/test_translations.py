"""Every message a learner reads exists in both languages, and the language is chosen sensibly."""

from __future__ import annotations

import gettext
import re
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.pofile import read_po

from labs.term.i18n import (
    CATALOGS,
    CHINESE,
    DOMAIN,
    ENGLISH,
    LOCALE_DIR,
    choose,
    normalize,
    translation,
)

ROOT = Path(__file__).resolve().parents[2]
PO_FILE = LOCALE_DIR / CATALOGS[CHINESE] / "LC_MESSAGES" / f"{DOMAIN}.po"
MO_FILE = PO_FILE.with_suffix(".mo")
PLACEHOLDER = re.compile(r"\{[a-z_]+(?::[^{}]*)?\}|%\([a-z_]+\)[sd]|%[sd]")


def key(message: str, context: str | None) -> str:
    """A message's key in a catalog: its msgid, after its context and gettext's EOT if it has
    one (the review's texts are looked up in the context of their file)."""
    return f"{context}\x04{message}" if context else message


def extracted_messages() -> set[str]:
    """The messages (key() above) that babel.cfg's extraction finds in the sources today."""
    with (ROOT / "babel.cfg").open(encoding="utf-8") as config:
        method_map, options_map = parse_mapping_cfg(config)  # type: ignore[no-untyped-call]
    found = set()
    for _file, _line, message, _comments, context in extract_from_dir(
        str(ROOT), method_map, options_map
    ):
        found.add(key(message if isinstance(message, str) else message[0], context))
    return found


def chinese_catalog() -> dict[str, str]:
    """The zh_CN .po file's translated, non-fuzzy entries (a plural one by its singular:
    Chinese has one form)."""
    with PO_FILE.open("rb") as source:
        catalog = read_po(source)
    found = {}
    for m in catalog:
        if not m.id or m.fuzzy:
            continue
        english = m.id if isinstance(m.id, str) else m.id[0]
        chinese = m.string if isinstance(m.string, str) else (m.string or [""])[0]
        if chinese:
            found[key(str(english), m.context)] = str(chinese)
    return found


def test_every_message_in_the_sources_has_a_chinese_translation() -> None:
    """A message wrapped in _() without a zh_CN entry fails here, naming it."""
    missing = sorted(extracted_messages() - chinese_catalog().keys())
    assert not missing, "messages without a zh_CN translation (run pybabel update):\n" + "\n".join(
        missing
    )


def test_the_compiled_catalog_matches_its_source() -> None:
    """lab.mo is lab.po compiled: a stale .mo would show learners old sentences."""
    with MO_FILE.open("rb") as compiled:
        shipped = gettext.GNUTranslations(compiled)
    mo_entries = {
        (k[0] if isinstance(k, tuple) else k): v
        for k, v in shipped._catalog.items()  # type: ignore[attr-defined]
        if k and (not isinstance(k, tuple) or k[1] == 0)  # a plural's only Chinese form
    }
    assert mo_entries == chinese_catalog()


def test_translations_keep_every_placeholder() -> None:
    """A translation that drops or renames {name} would crash or mislead at run time."""
    wrong = [
        (english, chinese)
        for english, chinese in chinese_catalog().items()
        if sorted(PLACEHOLDER.findall(english)) != sorted(PLACEHOLDER.findall(chinese))
    ]
    assert not wrong


def test_a_translated_message_reads_in_chinese() -> None:
    """The catalog is found and used: some message comes back different from its English."""
    zh = translation(CHINESE)
    assert any(zh.gettext(english) != english for english in chinese_catalog())


@pytest.mark.parametrize(
    ("explicit", "environ", "expected"),
    [
        (None, {}, ENGLISH),
        (None, {"LANG": "zh_CN.UTF-8"}, CHINESE),
        (None, {"LANG": "C.UTF-8"}, ENGLISH),
        (None, {"LANGUAGE": "fr:zh_CN", "LANG": "en_US.UTF-8"}, CHINESE),
        (None, {"LC_ALL": "en_GB.UTF-8", "LANG": "zh_CN.UTF-8"}, ENGLISH),
        (None, {"LAB_LANG": "zh", "LC_ALL": "en_US.UTF-8"}, CHINESE),
        ("en", {"LANG": "zh_CN.UTF-8"}, ENGLISH),
        ("zh-Hans", {}, CHINESE),
    ],
)
def test_the_language_comes_from_the_flag_then_the_environment(
    explicit: str | None, environ: dict[str, str], expected: str
) -> None:
    """--lang wins, then LAB_LANG, LANGUAGE, LC_ALL, LC_MESSAGES, LANG; unknown ones are skipped."""
    assert choose(explicit, environ) == expected


def test_an_unknown_language_flag_is_refused_with_the_choices() -> None:
    """--lang fr is an error that lists what the lab speaks, not a silent English."""
    with pytest.raises(ValueError, match="en, zh_CN"):
        choose("fr", {})


@pytest.mark.parametrize("name", ["zh_TW", "zh_HK.UTF-8", "de_DE"])
def test_languages_the_lab_does_not_have_are_not_guessed(name: str) -> None:
    """Traditional Chinese is not Simplified Chinese: those fall back to English."""
    assert normalize(name) is None


def test_the_review_texts_are_translated_and_their_ids_and_places_are_not() -> None:
    """Each text of labs/review/*.toml reads in Chinese from the catalog; ids, a hint's places
    and a checklist item's verifications name code and data, and stay as written."""
    from labs.review import texts

    for name in ("questions", "hints", "checklist", "messages"):
        english, chinese = texts.load(name, ENGLISH), texts.load(name, CHINESE)
        assert len(texts.texts(english)) == len(texts.texts(chinese))
        same = [
            t for t, c in zip(texts.texts(english), texts.texts(chinese), strict=True) if t == c
        ]
        assert same == [], f"{name}.toml: texts shown in English to a Chinese reader"
    english, chinese = texts.load("questions", ENGLISH), texts.load("questions", CHINESE)
    assert [q["id"] for q in chinese["question"]] == [q["id"] for q in english["question"]]
    hints = texts.load("hints", ENGLISH)["check"], texts.load("hints", CHINESE)["check"]
    assert [h.get("places") for h in hints[1].values()] == [
        h.get("places") for h in hints[0].values()
    ]
    items = texts.load("checklist", ENGLISH)["item"], texts.load("checklist", CHINESE)["item"]
    assert [i["verify"] for i in items[1]] == [i["verify"] for i in items[0]]
    # The same words in two files are two messages: each file may translate them its own way.
    assert texts.load("checklist", CHINESE)["labels"]["open"] != chinese["marks"]["not_yet"]
