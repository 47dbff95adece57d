"""The REST target: each operation's method and path under a base URL, a JSON body, the headers
given (`--header`) and `X-Contract-Hash` with the hash the lock pins: the toolkit's handshake (a
toolkit server serving another contract refuses the call with 412; one serving a newer compatible
contract answers with our hash and `X-Contract-Newer`). Other servers ignore the header."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import httpx

from evidencekit.contracts._loader import Variant
from evidencekit.contracts._policy import success_statuses
from evidencekit.testing._answers import curl, request_input, shown
from evidencekit.testing._contracts import Contract
from evidencekit.testing._gate.checks import Answer
from evidencekit.testing._gate.results import OperationReport
from evidencekit.testing._gate.targets import Unreachable

HASH_HEADER = "X-Contract-Hash"


class RestTarget:
    surface = "rest"
    rest = True

    def __init__(self, base_url: str, headers: Mapping[str, str], timeout: float) -> None:
        self.base = base_url.rstrip("/")
        self.shown = self.base
        self.headers = dict(headers)
        self.timeout = timeout
        self.http = httpx.Client(headers=self.headers, timeout=timeout, follow_redirects=False)

    def url(self, contract: Contract) -> str:
        return self.base + str((contract.operation.rest or {})["path"])

    def open(self, contracts: list[Contract]) -> tuple[bool, str]:
        """A GET of the first operation's path (a safe method: nothing is written) shows whether the
        server is there and whether it answers with the toolkit's X-Contract-Hash."""
        url = self.url(contracts[0]) if contracts else self.base + "/"
        try:
            response = self.http.get(url)
        except httpx.TimeoutException:
            raise Unreachable(f"{url}: no answer within {self.timeout:g} s") from None
        except httpx.HTTPError as exc:
            raise Unreachable(f"cannot reach {url}: {exc or type(exc).__name__}") from None
        if HASH_HEADER.lower() in response.headers:
            return True, f"its answers carry {HASH_HEADER}"
        return False, f"GET {url} answered HTTP {response.status_code} without {HASH_HEADER}"

    def variant(self, contract: Contract) -> tuple[Variant | None, str]:
        variant = contract.operation.rest_variant
        return variant, "" if variant else "not published over REST"

    def describe(self, contract: Contract, report: OperationReport) -> bool:
        return True

    def call(self, contract: Contract, payload: Any) -> Answer:
        rest = contract.operation.rest or {}
        headers = {"Content-Type": "application/json", HASH_HEADER: contract.locked_hash}
        carried = request_input(rest["method"], payload)
        try:
            response = self.http.request(rest["method"], self.url(contract), headers=headers, **carried)
        except httpx.TimeoutException:
            return Answer("no_answer", f"no answer within {self.timeout:g} s", rest=True)
        except httpx.HTTPError as exc:
            return Answer("no_answer", f"{type(exc).__name__}: {exc}", rest=True)
        return answer_of(response, success_statuses(contract.operation.manifest))

    def reproduction(self, contract: Contract, payload: Any) -> str:
        method = (contract.operation.rest or {})["method"]
        return curl(method, self.url(contract), payload, secret=self.headers,
                    plain={HASH_HEADER: contract.locked_hash})

    def close(self) -> None:
        self.http.close()


def answer_of(response: httpx.Response, statuses: tuple[int, ...] | None) -> Answer:
    """What the answer was; a success with a status the contract does not declare (`statuses`:
    contracts._policy.success_statuses, 200 when none is declared) or a body that is not JSON has a
    problem."""
    status = response.status_code
    try:
        data, is_json = response.json(), True
    except ValueError:
        data, is_json = response.text, False
    location = response.headers.get("location")
    base = Answer("other", f"HTTP {status}" + (f" to {location}" if location else ""), data,
                  status=status, rest=True, contract_hash=response.headers.get(HASH_HEADER),
                  contract_newer=response.headers.get("x-contract-newer"))
    if 200 <= status < 300:
        problem = None
        if statuses and status not in statuses:
            problem = f"the contract publishes success statuses {list(statuses)}"
        elif not is_json:
            kind = response.headers.get("content-type", "no content type")
            problem = f"the body is not JSON ({kind}): {shown(data)}"
        return replace(base, outcome="success", problem=problem)
    if 400 <= status < 500:
        return replace(base, outcome="refused", validation_refusal=status == 400)
    if status >= 500:
        return replace(base, outcome="server_error")
    return base
