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


def extracted_messages() -> set[str]:
    """The msgids that babel.cfg's extraction finds in the sources today."""
    with (ROOT / "babel.cfg").open(encoding="utf-8") as config:
        method_map, options_map = parse_mapping_cfg(config)  # type: ignore[no-untyped-call]
    found = set()
    for _file, _line, message, _comments, _context in extract_from_dir(
        str(ROOT), method_map, options_map
    ):
        found.add(message if isinstance(message, str) else message[0])
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
            found[str(english)] = str(chinese)
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


# The learner's texts kept as data (hints, review questions, checklist, messages) have their
# translation beside them as <name>.zh_CN.toml; these keys are not prose and are not translated.
NOT_PROSE = {"id", "core", "verify", "places"}
TEXT_FILES = sorted(
    p.stem for p in (ROOT / "labs" / "review").glob("*.toml") if p.stem.count(".") == 0
)


def prose(value: object, where: str = "") -> dict[str, str]:
    """Every translatable string in a parsed TOML file, by its dotted path (list entries by id)."""
    found: dict[str, str] = {}
    if isinstance(value, str):
        found[where] = value
    elif isinstance(value, dict):
        for key, inner in value.items():
            if key not in NOT_PROSE:
                found.update(prose(inner, f"{where}.{key}" if where else key))
    elif isinstance(value, list):
        for position, inner in enumerate(value):
            name = inner.get("id", position) if isinstance(inner, dict) else position
            found.update(prose(inner, f"{where}[{name}]"))
    return found


@pytest.mark.parametrize("name", TEXT_FILES)
def test_every_text_file_has_every_entry_in_chinese(name: str) -> None:
    """A hint, question or message added in English without its zh_CN text fails here."""
    import tomllib

    english = prose(tomllib.loads((ROOT / "labs" / "review" / f"{name}.toml").read_text()))
    chinese_file = ROOT / "labs" / "review" / f"{name}.{CHINESE}.toml"
    chinese = prose(tomllib.loads(chinese_file.read_text())) if chinese_file.exists() else {}
    missing = sorted(english.keys() - chinese.keys())
    assert not missing, f"{chinese_file.name} lacks: {', '.join(missing)}"
    untranslated = sorted(k for k in english if chinese[k] == english[k] and english[k].strip())
    assert not untranslated, f"{chinese_file.name} repeats the English of: {untranslated}"
    stray = sorted(chinese.keys() - english.keys())
    assert not stray, f"{chinese_file.name} has entries the English file does not: {stray}"


@pytest.mark.parametrize("name", TEXT_FILES)
def test_text_translations_keep_every_placeholder(name: str) -> None:
    """{tree}, {number:.0f} and the like survive translation, or the code fills the wrong text."""
    import tomllib

    english = prose(tomllib.loads((ROOT / "labs" / "review" / f"{name}.toml").read_text()))
    chinese_file = ROOT / "labs" / "review" / f"{name}.{CHINESE}.toml"
    chinese = prose(tomllib.loads(chinese_file.read_text()))
    field = re.compile(r"\{[^{}]*\}")
    wrong = [
        key
        for key, text in english.items()
        if key in chinese and sorted(field.findall(text)) != sorted(field.findall(chinese[key]))
    ]
    assert not wrong, f"placeholders differ in {chinese_file.name}: {wrong}"
