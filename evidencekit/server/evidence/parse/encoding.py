"""Turn response bytes into text: HTTP charset, byte order mark, <meta> declaration, detection.

A byte order mark is trusted before the HTTP charset, as browsers do: it cannot appear by accident
and servers often send a stale charset for files that carry one. For the same reason, bytes that are
valid UTF-8 and hold multi-byte sequences are read as UTF-8 whatever a header or <meta> declares: a
page saved or re-served as UTF-8 often keeps its old declaration (`<meta charset=iso-8859-1>`,
Apache's default `charset=ISO-8859-1`), and legacy-encoded text is almost never valid UTF-8 by
accident once it holds non-ASCII characters.
"""

from __future__ import annotations

import codecs
import re

import charset_normalizer

from evidencekit.server.evidence.parse.text import BINARY_SAMPLE, looks_binary
from evidencekit.server.evidence.parse.whatwg_labels import LABELS

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF32_LE, "utf-32-le"),  # before UTF-16 LE: its BOM starts with FF FE
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_META_CHARSET = re.compile(
    rb"""<meta[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9_.:()-]+)""", re.IGNORECASE
)
_XML_ENCODING = re.compile(rb"""^\s*<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9_.:()-]+)""")
_DETECTION_SAMPLE = 64 * 1024
# The legacy encodings of the WHATWG Encoding Standard, as Python names them: detection picks
# among these only (otherwise charset-normalizer may answer hp-roman8 or cp775 for Latin-1 text).
_WEB_CODECS = (
    "latin_1", "cp866", "iso8859_2", "iso8859_3", "iso8859_4", "iso8859_5", "iso8859_6", "iso8859_7",
    "iso8859_8", "iso8859_10", "iso8859_13", "iso8859_14", "iso8859_15", "iso8859_16", "koi8_r",
    "koi8_u", "mac_roman", "mac_cyrillic", "cp874", "cp1250", "cp1251", "cp1252", "cp1253",
    "cp1254", "cp1255", "cp1256", "cp1257", "cp1258", "gb18030", "big5", "euc_jp", "cp932",
    "shift_jis", "euc_kr", "cp949",
)  # fmt: skip
# The codecs that read ASCII bytes as something else: two bytes a character (UTF-16), or escapes
# that switch the character set (ISO-2022-JP). Every other codec the labels name, or detection
# answers, reads an ASCII body as ASCII (UTF-32 comes only from a byte order mark, read before).
_NOT_ASCII_BASED = ("utf-16", "iso2022")
# What a detected codec is read with: the standard's superset, as for a declared label.
_DETECTED_AS = {"latin_1": "cp1252", "shift_jis": "cp932", "euc_kr": "cp949", "big5": "big5hkscs"}


def codec_for(label: str | None) -> str | None:
    """The Python codec for a charset label the WHATWG Encoding Standard lists (whatwg_labels), or
    None: an unknown label, a label of a codec that is no text encoding (`punycode`, `idna`,
    `undefined`, `base64`, ...) or one never decoded (UTF-7, ISO-2022-KR). The caller then
    detects the encoding instead."""
    if not label:
        return None
    # The standard strips ASCII whitespace and compares ASCII case-insensitively.
    name = label.strip().strip("\"'").strip(" \t\n\f\r")
    if not name.isascii():
        return None
    return LABELS.get(name.lower())


def bom_codec(body: bytes) -> str | None:
    for bom, codec in _BOMS:
        if body.startswith(bom):
            return codec
    return None


def declared_codec(body: bytes) -> str | None:
    """The charset of a <meta> tag or an XML declaration within the first 4 KiB."""
    head = body[:4096]
    match = _XML_ENCODING.match(head) or _META_CHARSET.search(head)
    if match is None:
        return None
    codec = codec_for(match.group(1).decode("ascii", "replace"))
    # A declaration readable as ASCII cannot be in UTF-16 or UTF-32: the page is UTF-8 (WHATWG).
    if codec is not None and codec.startswith(("utf-16", "utf-32")):
        return "utf-8"
    return codec


def detected_codec(body: bytes) -> str:
    """Guess: UTF-16 by its zero bytes, valid UTF-8 (rarely valid by accident), ISO-2022-JP by its
    escapes, then charset-normalizer limited to the encodings browsers support."""
    sample = body[:_DETECTION_SAMPLE]
    utf16 = _utf16_by_zeros(sample)
    if utf16:
        return utf16
    if _reads_as_utf8(sample):
        return "iso2022_jp" if b"\x1b$B" in sample or b"\x1b$@" in sample else "utf-8"
    try:
        matches = list(charset_normalizer.from_bytes(sample, cp_isolation=list(_WEB_CODECS)))
    except Exception:  # the detector is a heuristic: never let it fail a parse
        matches = []
    if not matches:
        return "utf-8"  # nothing reads it as text: decode with replacement characters
    best = matches[0]
    for match in matches:
        # On a tie (cp1250 and cp1252 read most Western text equally well), take the web's default.
        tied = match.chaos == best.chaos and match.coherence == best.coherence
        if tied and "cp1252" in match.could_be_from_charset:
            return "cp1252"
    if best.encoding in _WEB_CODECS:
        return _DETECTED_AS.get(best.encoding, best.encoding)
    return codec_for(best.encoding) or "utf-8"


def _utf16_by_zeros(sample: bytes) -> str | None:
    head = sample[:512]
    if len(head) < 8:
        return None
    even = head[0::2].count(0)
    odd = head[1::2].count(0)
    half = len(head) // 2
    if odd > half * 0.6 and even < half * 0.1:
        return "utf-16-le"
    if even > half * 0.6 and odd < half * 0.1:
        return "utf-16-be"
    return None


def _decode(body: bytes, codec: str) -> str:
    text = body.decode(codec, errors="replace")
    return text[1:] if text.startswith("\ufeff") else text


def _utf8_beats(codec: str | None, body: bytes) -> str | None:
    """The declared codec, or "utf-8" when the body reads as UTF-8 with non-ASCII characters and the
    declaration names a legacy single- or multi-byte encoding."""
    if codec is None or codec == "utf-8" or codec.startswith(("utf-16", "utf-32")) or body.isascii():
        return codec
    # The whole body: a legacy page may be ASCII for its first 64 KiB of script.
    return "utf-8" if _reads_as_utf8(body) else codec


def _reads_as_utf8(data: bytes) -> bool:
    """Valid UTF-8, allowing a last character cut short (a sample, or a body cut at the byte cap)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        return error.reason == "unexpected end of data" and error.start >= len(data) - 3
    return True


def _readable(body: bytes, codec: str, declared: bool) -> str:
    """body decoded with codec; when a declared codec leaves it unreadable (mostly replacement
    characters: Shift_JIS served as charset=utf-8), the detected codec's reading if that one is text."""
    text = _decode(body, codec)
    if declared and looks_binary(text):
        detected = _decode(body, detected_codec(body))
        if not looks_binary(detected):
            return detected
    return text


def decode_text(body: bytes, http_charset: str | None = None) -> str:
    """Bytes of a text/plain or caption response as text; never raises."""
    bom = bom_codec(body)
    if bom:
        return _decode(body, bom)
    declared = _utf8_beats(codec_for(http_charset), body)
    return _readable(body, declared or detected_codec(body), declared is not None)


def decode_html(body: bytes, http_charset: str | None = None) -> str:
    """Bytes of an HTML or XHTML response as text; never raises."""
    data = bytes(body)  # (a bytearray or a memoryview read as bytes; bytes themselves are not copied)
    text, _ = _html_reading(data, http_charset)
    return data.decode("ascii") if text is None else text


def html_source(body: bytes, http_charset: str | None = None) -> str | bytes:
    """decode_html's text, or the body itself where that is the text's UTF-8 and the text does not
    look binary: an ASCII body read with a codec that reads ASCII as ASCII, or valid UTF-8 read as
    UTF-8 (no byte order mark). An HTML parser reads those bytes as they are, where the text would
    be encoded again (for an ASCII page, a decoding and an encoding saved: two copies of the page)."""
    body = bytes(body)  # (a bytearray or a memoryview read as bytes; bytes themselves are not copied)
    text, verbatim = _html_reading(body, http_charset)
    return body if verbatim or text is None else text


def _html_reading(body: bytes, http_charset: str | None) -> tuple[str | None, bool]:
    """(decode_html's text, or None for an ASCII body it reads as ASCII and no decoding was needed
    for; whether the body is that text's UTF-8)."""
    bom = bom_codec(body)
    if bom:
        return _decode(body, bom), False
    declared = _utf8_beats(codec_for(http_charset) or declared_codec(body), body)
    codec = declared or detected_codec(body)
    if body.isascii():
        if not codec.startswith(_NOT_ASCII_BASED) and not looks_binary(body[:BINARY_SAMPLE].decode("ascii")):
            return None, True
    elif codec == "utf-8":
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            pass
        else:
            if not looks_binary(text):
                return text, True
    return _readable(body, codec, declared is not None), False
