"""Ids the store makes: UUID version 7 (RFC 9562), time-ordered.

A receipt's or a source's id is the primary key of a table that grows by a million rows a day: a
random (version 4) key puts every insert, and every new row version an update writes, on a random
page of that index, which a store larger than its cache reads from disk first. Time-ordered keys
keep the pages of the receipts being made, claimed and settled together (scripts/bench scale).
The contracts' uuid patterns admit versions 1 to 8.
"""

from __future__ import annotations

import uuid

from uuid_utils.compat import uuid7


def new_id() -> uuid.UUID:
    return uuid7()
