"""What a refusal of the breaking-change gate adds besides the acknowledged break: the project's
other ways out, and which policy the next command will judge by.

* A break that the lenient policy accepts (a property added to an open request object, say) is
  named so, with the pyproject.toml line that chooses lenient for good: `lock`, `check` and
  `generate` then judge alike.
* A `--compatibility` or `--compatibility-mode` flag that differs from pyproject.toml holds for
  that run only: the note says what `check` (and `generate`) will use and how to make them agree.
"""

from __future__ import annotations

from dataclasses import replace

from evidencekit.codegen._breaking import Compatibility

TABLE = "[tool.evidencekit.codegen]"
LENIENT_ASSUMES = "it assumes clients send only the properties their schema declares and read only those it declares"


def lenient_alternative(compatibility: Compatibility) -> Compatibility | None:
    """The same mode under the lenient policy; None when the policy is lenient already."""
    return None if compatibility.policy == "lenient" else replace(compatibility, policy="lenient")


def lenient_hint(breaking: int, under_lenient: int) -> list[str]:
    """Lines for a refusal of `breaking` breaks of which `under_lenient` remain under lenient
    (nothing when lenient accepts none of them)."""
    accepted = breaking - under_lenient
    if breaking <= 0 or accepted <= 0:
        return []
    which = "all of them" if under_lenient == 0 else f"{accepted} of the {breaking}"
    return [f"`compatibility = \"lenient\"` accepts {which} ({LENIENT_ASSUMES}); if your clients do, say so "
            "in pyproject.toml, so that `lock`, `check` and `generate` judge alike:",
            f"  {TABLE}",
            '  compatibility = "lenient"']


def flag_mismatch(policy_flag: str | None, mode_flag: str | None, configured: Compatibility) -> list[str]:
    """A note when the flags choose another compatibility than pyproject.toml (nothing when they agree)."""
    differs: list[tuple[str, str, str]] = []
    if policy_flag is not None and policy_flag != configured.policy:
        differs.append(("compatibility", policy_flag, configured.policy))
    if mode_flag is not None and mode_flag != configured.mode_name:
        differs.append(("compatibility_mode", mode_flag, configured.mode_name))
    if not differs:
        return []
    flags = ", ".join(f"--{key.replace('_', '-')} {flag}" for key, flag, _ in differs)
    said = ", ".join(f"{key} = \"{value}\"" for key, _, value in differs)
    lines = ", ".join(f"{key} = \"{flag}\"" for key, flag, _ in differs)
    return [f"note: {flags} holds for this run only; pyproject.toml says {said}, and `check` (with --against) "
            f"and `generate` will judge by that. To make them agree, write under {TABLE} in pyproject.toml: "
            f"{lines} (or drop the flag)"]
