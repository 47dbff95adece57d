"""The public surface of server.parse does not drift."""

from __future__ import annotations

import server.parse


def test_exported_names() -> None:
    assert sorted(server.parse.__all__) == [
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
    for name in server.parse.__all__:
        assert getattr(server.parse, name).__module__.startswith("server.parse.")


def test_caption_error_is_a_value_error() -> None:
    assert issubclass(server.parse.CaptionError, ValueError)
