"""Non-text contrast in Chromium: the keyboard's focus ring and the graph's arrows reach 3:1."""

from __future__ import annotations

import re
from typing import Any

import pytest

from .browser import browser, live_url, page

pytestmark = pytest.mark.browser
__all__ = ["browser", "live_url", "page"]  # fixtures, imported so pytest finds them

NON_TEXT_CONTRAST = 3.0  # WCAG 2.2, 1.4.11


def luminance(css: str) -> float:
    """The relative luminance of an rgb()/rgba() colour as getComputedStyle gives it."""
    red, green, blue = (int(part) / 255 for part in re.findall(r"\d+", css)[:3])

    def linear(channel: float) -> float:
        return channel / 12.92 if channel <= 0.03928 else ((channel + 0.055) / 1.055) ** 2.4

    return 0.2126 * linear(red) + 0.7152 * linear(green) + 0.0722 * linear(blue)


def contrast(one: str, other: str) -> float:
    """WCAG's contrast ratio between two colours."""
    light, dark = sorted((luminance(one), luminance(other)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


@pytest.mark.parametrize(
    ("path", "control"),
    [
        ("/checks", "#run-checks"),  # a dark button
        ("/checks", 'input[name="tree"][value="starter"]'),
        ("/runs/starter", "#send"),
        ("/review", "textarea"),
        ("/checks", ".top nav a"),  # on the dark bar
    ],
)
def test_the_focus_ring_stands_out_from_what_surrounds_it(
    page: Any, live_url: str, path: str, control: str
) -> None:
    """Reached by the keyboard, a control has a ring of 2 px or more at 3:1 against its ground."""
    page.goto(live_url + path)
    target = page.locator(control).first
    page.keyboard.press("Tab")  # the keyboard is in use: focus-visible applies from here on
    target.focus()
    ring = target.evaluate(
        """element => {
            const style = getComputedStyle(element);
            let ground = element.parentElement;
            while (ground && getComputedStyle(ground).backgroundColor === 'rgba(0, 0, 0, 0)') {
                ground = ground.parentElement;
            }
            return {
                style: style.outlineStyle, width: parseFloat(style.outlineWidth),
                color: style.outlineColor,
                ground: ground ? getComputedStyle(ground).backgroundColor : 'rgb(255, 255, 255)',
            };
        }"""
    )
    assert ring["style"] != "none" and ring["width"] >= 2, ring
    assert contrast(ring["color"], ring["ground"]) >= NON_TEXT_CONTRAST, ring


def test_the_graphs_allowed_moves_are_drawn_at_three_to_one(page: Any, live_url: str) -> None:
    """The arrows of the allowed moves, and their heads, against the white of the figure."""
    page.goto(f"{live_url}/runs/starter")
    page.wait_for_selector(".edge.allowed path", state="attached")
    for selector, prop in [(".edge.allowed path", "stroke"), (".head.allowed", "fill")]:
        colour = page.locator(selector).first.evaluate(
            f"element => getComputedStyle(element).{prop}"
        )
        assert contrast(colour, "rgb(255, 255, 255)") >= NON_TEXT_CONTRAST, (selector, colour)
