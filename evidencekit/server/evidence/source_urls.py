"""What a retrieved URL is called once it is stored, and what callers are shown of it.

The fetch always uses the URL as the caller gave it (a key in its query string may be what lets the
origin answer). What is stored and answered is derived from it:

- The source key (`source_key`): the evidence's identity and its document's name,
  `documents/{source key without its scheme}`, which get_documents serves and search_documents
  answers. Scheme and host lowercased (IDNA), default port and fragment dropped; tracking
  parameters dropped (`TRACKING`: `utm_*`, `fbclid`, `gclid`, ...), so `page?utm_source=news` and
  `page` are one document; every other parameter kept as written, in its order; the value of a
  parameter whose name says it holds a secret (`is_secret`: `api_key`, `token`, `sig`,
  `X-Amz-Signature`, ...) replaced by `redacted-` and 12 hex digits of an HMAC-SHA256 of the value
  under a key the store keeps (store_keys, `NAMES_KEY`). The same secret is the same name, so a
  page fetched twice with it is one document; two secrets are two names, so two callers' pages
  behind one path never become one document; and the name shows nothing to guess the secret
  from. A name given back to get_documents keeps a value already in that form (`named`).
- The URL a result shows (`shown_url`, the receipt's `provenance.source_url`, and the base relative
  links in the markdown are resolved against): the URL fetched, with every secret parameter's value
  replaced by `redacted` and without its fragment.

Tracking parameters are an explicit list, not a pattern: dropping a parameter a site needs
(`?id=`, `?source=`, `?uid=`) would make two pages one document. The list follows the global rules
of ClearURLs and AdGuard's URL tracking filter. Secrets are found by the words of the parameter's
name, generously: a value redacted needlessly only makes a name less readable, never two pages one.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Callable
from urllib.parse import unquote_plus

import httpx

NAMES_KEY = "source_names"  # the store key (store_keys) secret values in names are hashed with

TRACKING_PREFIXES = ("utm_", "mtm_")  # Google Analytics campaign parameters; Matomo's
TRACKING = frozenset({
    # ad click ids: Google, Microsoft, Meta, Yandex, TikTok, X, LinkedIn, Instagram, Adobe
    "gclid", "gclsrc", "dclid", "gbraid", "wbraid", "msclkid", "fbclid", "yclid", "ysclid", "ttclid",
    "twclid", "li_fat_id", "igshid", "igsh", "s_kwcid", "ef_id", "srsltid",
    # analytics linkers and campaign ids: Google, Mailchimp, HubSpot, Marketo, Piwik, AT Internet, ...
    "_ga", "_gl", "mc_cid", "mc_eid", "_hsenc", "_hsmi", "__hstc", "__hssc", "__hsfp", "hsctatracking",
    "mkt_tok", "pk_campaign", "pk_kwd", "pk_source", "pk_medium", "pk_content", "xtor", "oly_anon_id",
    "oly_enc_id", "vero_id", "vero_conv", "wickedid", "_openstat", "rb_clickid", "__s",
    # X (Twitter) share links
    "ref_src", "ref_url",
})

# Words of a parameter's name that say its value is a secret, and endings of one-word names.
SECRET_WORDS = frozenset({
    "key", "apikey", "token", "secret", "password", "passwd", "pwd", "pass", "passcode", "signature",
    "sig", "auth", "authorization", "credential", "credentials", "session", "sessionid", "sessid", "sid",
    "jsessionid", "phpsessid", "jwt", "otp", "hmac", "ticket",
})
SECRET_ENDINGS = ("token", "secret", "password", "passwd", "signature", "apikey", "sessionid", "accesskey",
                  "privatekey")

REDACTED = "redacted"  # a shown URL's secret values
_NAMED = re.compile(r"redacted-[0-9a-f]{12}")  # a name's secret value
_WORDS = re.compile(r"[a-z0-9]+")
_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_PARAMETERS = re.compile(r"([^&;]*)([&;]?)")


def parameter_name(raw: str) -> str:
    return unquote_plus(raw)


def is_tracking(name: str) -> bool:
    folded = name.lower()
    return folded in TRACKING or folded.startswith(TRACKING_PREFIXES)


def is_secret(name: str) -> bool:
    words = _WORDS.findall(_CAMEL.sub(r"\1 \2", name).lower())
    return any(word in SECRET_WORDS or word.endswith(SECRET_ENDINGS) for word in words)


def named_value(names_key: bytes, value: str) -> str:
    """A secret value as a name holds it."""
    return "redacted-" + hmac.new(names_key, value.encode(), hashlib.sha256).hexdigest()[:12]


def _query(query: str, *, drop: Callable[[str], bool], value_of: Callable[[str], str]) -> str:
    """`query` with the parameters `drop` names left out and each secret value replaced by
    value_of(value); the others, and the separators between them (`&` or `;`), as written."""
    kept: list[str] = []
    for part, separator in _PARAMETERS.findall(query):
        raw_name, equals, value = part.partition("=")
        name = parameter_name(raw_name)
        if not part or drop(name):
            continue
        if value and is_secret(name):
            part = f"{raw_name}{equals}{value_of(value)}"
        kept.append(part + (separator or "&"))
    return "".join(kept)[:-1]


def source_key(url: str, names_key: bytes, *, named: bool = False) -> str:
    """The URL as a source identity (above), itself a valid URI. `named`: the URL a document name
    spells, whose secret values may be in their stored form already."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError):
        return url
    default = {"https": 443, "http": 80}.get(parsed.scheme)
    port = "" if parsed.port in (None, default) else f":{parsed.port}"
    path = parsed.raw_path.decode("ascii", "replace").split("?", 1)[0] or "/"
    host = parsed.raw_host.decode("ascii").lower()  # IDNA (punycode), as a URI spells it
    if ":" in host:
        host = f"[{host}]"  # an IPv6 literal keeps its brackets

    def value_of(value: str) -> str:
        return value if named and _NAMED.fullmatch(value) else named_value(names_key, value)

    query = _query(parsed.query.decode("ascii", "replace"), drop=is_tracking, value_of=value_of)
    return f"{parsed.scheme}://{host}{port}{path}" + (f"?{query}" if query else "")


def shown_url(url: str) -> str:
    """The URL as a result shows it: without its fragment, each secret value `redacted`."""
    base, _, _ = url.partition("#")
    path, question, query = base.partition("?")
    if not question:
        return path
    shown = _query(query, drop=lambda _: False, value_of=lambda _: REDACTED)
    return f"{path}?{shown}" if shown else path

