"""What the gate sends: valid inputs of the surface's published variant and mutations of them
(the strategies the conformance plugin uses), aimed by pins.

A pin (`--set [OPERATION:]NAME=VALUE`) replaces a top-level input property in every generated
input that has it: the id of a workspace the credential may use, a URL that leads nowhere. It does
what the plugin's `conformance_prepare` fixture does, from the command line. The value is JSON
when it parses as JSON, else text, and must satisfy the property's schema.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from evidencekit.contracts._loader import Variant
from evidencekit.contracts._validation import compile_schema
from evidencekit.testing._contracts import Contract
from evidencekit.testing._strategies import inputs, mutated_inputs


class PinError(ValueError):
    """A pin that is malformed, names nothing, or holds a value the contract refuses."""


@dataclass(frozen=True)
class Pin:
    name: str
    value: Any
    operation: str | None = None  # None: every operation

    @classmethod
    def parse(cls, text: str) -> Pin:
        target, sep, raw = text.partition("=")
        operation, _, name = target.rpartition(":")
        if not sep or not name:
            raise PinError(f"--set {text!r}: expected [OPERATION:]NAME=VALUE")
        try:
            value = json.loads(raw)
        except ValueError:
            value = raw
        return cls(name, value, operation or None)

    def applies(self, operation: str, schema: dict[str, Any]) -> bool:
        return self.operation in (None, operation) and self.name in schema.get("properties", {})


def check_pins(pins: Sequence[Pin], chosen: Sequence[tuple[Contract, Variant]],
               known: Sequence[str] = ()) -> None:
    """PinError naming a pin no chosen operation's input has, or whose value a schema refuses
    (`known`: every operation of the contracts, to tell one not chosen from one that is not there)."""
    names = {contract.operation.name for contract, _ in chosen}
    for pin in pins:
        if pin.operation is not None and pin.operation not in names:
            if pin.operation in known:
                raise PinError(f"--set {pin.operation}:{pin.name}: {pin.operation} is not among the operations "
                               "chosen (--operation, --read-only, or not published on the surfaces named)")
            raise PinError(f"--set {pin.operation}:{pin.name}: no operation {pin.operation!r} in the contracts")
        used = False
        for contract, variant in chosen:
            schema = variant.input_schema
            if not pin.applies(contract.operation.name, schema):
                continue
            used = True
            problem = _refused(schema, schema["properties"][pin.name], pin.value)
            if problem:
                raise PinError(f"--set {pin.name}={json.dumps(pin.value)}: {contract.operation.name} "
                               f"({variant.name} input) refuses it: {problem}")
        if not used:
            where = pin.operation or "any chosen operation"
            raise PinError(f"--set {pin.name}: no input property {pin.name!r} in {where}")


def _refused(root: dict[str, Any], schema: Any, value: Any) -> str | None:
    """Why `schema` (a property of `root`, whose $refs it may use) refuses `value`."""
    if isinstance(schema, bool):
        return None if schema else "the property's schema is false"
    wrapped: dict[str, Any] = {key: root[key] for key in ("$schema", "$defs", "definitions")
                               if key in root}
    problems = list(compile_schema({**wrapped, **schema}).iter_errors(value))
    return problems[0].message if problems else None


def _pinned(operation: str, schema: dict[str, Any], pins: Sequence[Pin]) -> Any:
    mine = [pin for pin in pins if pin.applies(operation, schema)]

    def aim(payload: Any) -> Any:
        if not isinstance(payload, dict):
            return payload
        return {**payload, **{pin.name: pin.value for pin in mine if pin.name in payload}}

    return aim


Prepare = Callable[[str, Any], Any]  # (operation, generated input) -> the input to send


def aimed(contract: Contract, variant: Variant, pins: Sequence[Pin],
          prepare: Prepare | None = None) -> Callable[[Any], Any]:
    """What is done to every generated valid input before it is sent: the pins, then `prepare`."""
    name = contract.operation.name
    pin = _pinned(name, variant.input_schema, pins)
    return pin if prepare is None else lambda payload: prepare(name, pin(payload))


def valid_inputs(contract: Contract, variant: Variant, pins: Sequence[Pin],
                 prepare: Prepare | None = None) -> st.SearchStrategy[Any]:
    """Inputs the variant accepts, pinned (a pin that combines badly with the rest is filtered
    out), then adapted by `prepare` (the plugin's `conformance_prepare` fixture), whose result is
    sent as it is."""
    name, schema = contract.operation.name, variant.input_schema
    aimed = inputs(schema).map(_pinned(name, schema, pins))
    if any(pin.applies(name, schema) for pin in pins):
        aimed = aimed.filter(lambda payload: not contract.validator.input_errors(payload, variant.name))
    if prepare is None:
        return aimed
    return aimed.map(lambda payload: prepare(name, payload))


def invalid_inputs(contract: Contract, variant: Variant, pins: Sequence[Pin],
                   prepare: Prepare | None = None) -> st.SearchStrategy[Any]:
    """One mutation of a valid input per example, each refused by the variant's input schema."""
    return mutated_inputs(valid_inputs(contract, variant, pins, prepare), variant.input_schema,
                          lambda bad: bool(contract.validator.input_errors(bad, variant.name)))
