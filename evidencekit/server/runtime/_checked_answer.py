"""Answers checked once, when the data behind them is written, instead of on every read.

The pipeline checks every answer against every published output variant before it is sent. For
an answer that cannot change once written (a settled job's result, read by every client's final
poll), that check, and parsing the stored data to make it, is most of what a read costs. Here an
application checks such an answer when it writes the data, keeps it as bytes, and hands back a
`CheckedAnswer` from its handler; the pipeline sends it as it is when it was checked against the
contract the server serves now (its hash), and parses and checks it again otherwise: an answer
stored before a contract update is never sent unchecked under the newer contract.

A large member kept elsewhere (the stored result's text) need not be stored twice: `checked_frame`
checks the whole answer and keeps what lies around that member (`Frame.head`, `Frame.tail`);
`Frame.around(text)` puts the member's stored JSON text back between them. The text must be JSON
of the very value that was checked (the caller's store keeps it as written).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, final

import orjson
from pydantic import BaseModel

from evidencekit.contracts._spec import OperationSpec
from evidencekit.contracts._validation import validator_for
from evidencekit.contracts._wire import wire_data
from evidencekit.server.runtime._json_answer import answer_bytes

log = logging.getLogger("evidencekit.checked")


@final
@dataclass(frozen=True, slots=True)
class CheckedAnswer:
    """An answer's JSON text, checked against the output contract whose hash it carries."""

    body: bytes
    contract_hash: str


@dataclass(frozen=True, slots=True)
class Frame:
    """A checked answer without one member: the text before and after where that member goes."""

    contract_hash: str
    head: str
    tail: str

    def around(self, member_json: str | bytes) -> CheckedAnswer:
        """The answer with `member_json` in its member's place. As UTF-8 bytes, as a database can
        give a stored text, it is put in as it is: a page of text that is not ASCII cost ~9 µs to
        decode as it was read and encode again to be sent (6,000 characters)."""
        if isinstance(member_json, bytes):
            return CheckedAnswer(b"".join((self.head.encode(), member_json, self.tail.encode())), self.contract_hash)
        return CheckedAnswer(f"{self.head}{member_json}{self.tail}".encode(), self.contract_hash)


def _written(spec: OperationSpec, data: Any) -> bytes | None:
    """`data` as the JSON text of `spec`'s answer; None (logged) when it cannot be sent: it
    violates the contract, or JSON cannot carry it (a lone surrogate), which the read would
    refuse too."""
    violations = validator_for(spec).output_errors(data)
    if violations:
        log.error("not kept as checked: the %s answer violates its contract: %s", spec.name,
                  "; ".join(f"[{v.variant}] {v.path} {v.message}" for v in violations))
        return None
    try:
        return answer_bytes(data)
    except (TypeError, ValueError) as exc:
        log.error("not kept as checked: the %s answer cannot be written as JSON: %s", spec.name, exc)
        return None


def checked_answer(spec: OperationSpec, answer: BaseModel | Mapping[str, Any]) -> CheckedAnswer | None:
    """`answer` (an output model or its JSON data, as a handler returns) as a CheckedAnswer of
    `spec`'s output; None (logged) when it violates the contract, so that the read that would send
    it checks it, and refuses it, as any other answer."""
    body = _written(spec, wire_data(answer))
    return None if body is None else CheckedAnswer(body, spec.contract_hash)


def checked_frame(spec: OperationSpec, answer: BaseModel | Mapping[str, Any], member: Sequence[str]) -> Frame | None:
    """`answer` checked as `spec`'s output, kept without the member at the path `member` (object
    keys, outermost first; that member must be present); None (logged) when it violates the
    contract."""
    data = wire_data(answer)
    if _written(spec, data) is None:
        return None
    parents = [data]
    for key in member[:-1]:
        parents.append(parents[-1][key])
    while True:
        # The member's place: a string no other part of the answer holds (a random one, tried
        # again in the unlikely case that it does). `data` itself is left as it is.
        stand_in = f"evidencekit-member-{uuid.uuid4().hex}"
        copy: Any = stand_in
        for parent, key in zip(reversed(parents), reversed(member), strict=True):
            copy = {**parent, key: copy}
        text = answer_bytes(copy).decode()
        quoted = f'"{stand_in}"'
        if text.count(quoted) == 1:
            head, _, tail = text.partition(quoted)
            return Frame(spec.contract_hash, head, tail)


def answer_data(answer: CheckedAnswer) -> Any:
    """The JSON data of a checked answer (for a surface that sends data, not bytes)."""
    return orjson.loads(answer.body)
