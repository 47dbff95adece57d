"""The public surface of evidencekit.server.evidence.parse does not drift."""

from __future__ import annotations

import evidencekit.server.evidence.parse as parse


def test_exported_names() -> None:
    assert sorted(parse.__all__) == [
        "CaptionError",
        "CaptionExtract",
        "Cue",
        "HtmlExtract",
        "Track",
        "decode_html",
        "decode_text",
        "parse_html",
        "parse_plain_text",
        "parse_subrip",
        "parse_webvtt",
        "sniff_captions",
    ]
    for name in parse.__all__:
        assert getattr(parse, name).__module__.startswith("evidencekit.server.evidence.parse.")


def test_caption_error_is_a_value_error() -> None:
    assert issubclass(parse.CaptionError, ValueError)
