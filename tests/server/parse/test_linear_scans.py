"""The hand-written scans that replaced two backtracking regexes: the same answers, in linear time."""

from __future__ import annotations

import html
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from evidencekit.server.evidence.parse.captions_vtt import strip_ruby_text
from evidencekit.server.evidence.parse.html_tree import cdata_as_text
from tests.support import alternating_cpu_seconds

RUBY_TEXT = re.compile(r"<rt(?:[\s.][^>]*)?>.*?(?:</rt\s*>|(?=</ruby\s*>)|$)", re.DOTALL)  # the old regex
CDATA = re.compile(r"<!\[CDATA\[(.*?)\]\]>", re.DOTALL)

RUBY_TOKENS = ["<rt", "<rt>", "<rt ", "<rt.", ">", "</rt>", "</rt  >", "</rt", "</ruby>", "</ruby \n>", "</r",
               "<rtc>", "<ruby>", "a", "漢", " ", "\n", "\t", "."]
CDATA_TOKENS = ["<![CDATA[", "]]>", "]]", "]", "<", "&", "a", "\n", "<b>"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(RUBY_TOKENS), max_size=30).map("".join))
def test_ruby_text_is_stripped_as_the_regex_did(text: str) -> None:
    assert strip_ruby_text(text) == RUBY_TEXT.sub("", text)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(CDATA_TOKENS), max_size=30).map("".join))
def test_cdata_becomes_text_as_the_regex_did(text: str) -> None:
    assert cdata_as_text(text) == CDATA.sub(lambda match: html.escape(match.group(1), quote=False), text)


def test_hostile_repetitions_take_time_in_proportion_to_their_length() -> None:
    """Four times the input costs about four times the time (a ratio in the same run, not a clock
    bound): the regexes took sixteen times (quadratic) on these inputs."""
    for function, token in ((strip_ruby_text, "<rt "), (strip_ruby_text, "<rt></r"), (cdata_as_text, "<![CDATA[")):
        small, large = token * 20_000, token * 80_000
        small_seconds, large_seconds = alternating_cpu_seconds(function, small, large)
        ratio = large_seconds / max(small_seconds, 1e-6)
        assert ratio < 8, (function.__name__, token, ratio)
