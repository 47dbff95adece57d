"""What search_documents' index holds of a document: its title's words and its text's, and the
forms they take. Computed once per settled revision; for a fetched page in a parse process
(HtmlParser.index), so that the event loop answering status and search calls does not spend it
(a fifth of the server process's time while a batch drained)."""

from __future__ import annotations

from evidencekit.server.evidence import search_forms, search_text
from evidencekit.server.evidence.search_rank import Words as IndexWords

__all__ = ["IndexWords", "entry_words"]


def entry_words(title: str | None, text: str) -> IndexWords:
    """Title words, text words, forms (search_forms: stems, compound parts, Hebrew without prefix
    letters) and reversed endings, each space-separated."""
    title_words, body_words = search_text.words(title or ""), search_text.words(text)
    forms = search_forms.page_forms(title_words.split(), body_words.split())
    return title_words, body_words, forms.forms, forms.tails
