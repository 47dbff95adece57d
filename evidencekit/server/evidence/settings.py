"""The service's settings from the environment (docs/settings.md), read once, where a process or an
app starts: `research-evidence serve`, `mcp` and `worker`, and `create_app` when it is given none
(the app factory is the edge of an app another server imports). Each part is handed what it needs
from here: no module of the service reads the environment at import, or again on a request (a
setting changed in a running process's environment changes nothing; restart it). env_check.py checks
the same variables when a process starts, so a typo fails there, in one line.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from evidencekit.server.evidence.env_check import setting_as
from evidencekit.server.evidence.fetch.fetcher import CA_BUNDLE_ENV
from evidencekit.server.evidence.fetch.policy import EgressPolicy
from evidencekit.server.evidence.oauth import OAuthSettings
from evidencekit.server.evidence.parse.pool import processes_from_env
from evidencekit.server.evidence.search_share import STREAMS_PER_TOKEN_ENV
from evidencekit.server.evidence.service import RATE_ENV, ServiceSettings
from evidencekit.server.evidence.store.receipts import retention_from_env
from evidencekit.server.evidence.store.ttl_cache import DEFAULT_TTL, TTL_ENV
from evidencekit.server.evidence.worker import WorkerSettings
from evidencekit.server.runtime import StreamLimits

PUBLIC_HOSTNAME_ENV = "EVIDENCEKIT_PUBLIC_HOSTNAME"
PROFILE_ENV = "EVIDENCEKIT_MCP_PROFILE"
OUTPUT_SCHEMAS_ENV = "SOSOAPI_OUTPUT_SCHEMAS"
STREAMS_ENV = "EVIDENCEKIT_MCP_STREAMS"
STREAM_IDLE_ENV = "EVIDENCEKIT_MCP_IDLE_SECONDS"


@dataclass(frozen=True)
class McpOptions:
    """What the MCP surface takes from the environment."""

    profile: str = "full"  # EVIDENCEKIT_MCP_PROFILE: the tools listed
    output_schemas: bool = False  # SOSOAPI_OUTPUT_SCHEMAS=1: outputSchema in tools/list
    streams: StreamLimits = StreamLimits()  # what /mcp over HTTP holds open


@dataclass(frozen=True)
class EvidenceSettings:
    oauth: OAuthSettings | None = None  # the OAuth issuer, audience and JWKS: delegated_oauth tokens (None: off)
    egress: EgressPolicy = EgressPolicy()  # EVIDENCEKIT_ALLOW_PRIVATE_HOSTS
    ca_bundle: str = ""  # EVIDENCEKIT_CA_BUNDLE: more roots the fetcher trusts (a PEM file)
    public_hostname: str = ""  # EVIDENCEKIT_PUBLIC_HOSTNAME: a Host answered besides loopback
    auth_cache_seconds: float = DEFAULT_TTL  # EVIDENCEKIT_AUTH_CACHE_SECONDS
    searches_per_credential: int = StreamLimits.per_credential  # EVIDENCEKIT_MCP_STREAMS_PER_TOKEN (also /mcp's share)
    service: ServiceSettings = ServiceSettings()  # the retrieve rate, the retention
    worker: WorkerSettings = field(default_factory=WorkerSettings)
    parse_processes: int = field(default_factory=lambda: processes_from_env({}))  # EVIDENCEKIT_PARSE_PROCESSES
    mcp: McpOptions = McpOptions()

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> EvidenceSettings:
        env = dict(os.environ if environ is None else environ)
        defaults, service, streams = cls(), ServiceSettings(), StreamLimits()
        per_credential = setting_as(STREAMS_PER_TOKEN_ENV, defaults.searches_per_credential, int, env)
        cache_seconds = setting_as(TTL_ENV, defaults.auth_cache_seconds, float, env)
        return cls(
            oauth=OAuthSettings.from_env(env),
            egress=EgressPolicy.from_env(env),
            ca_bundle=setting_as(CA_BUNDLE_ENV, defaults.ca_bundle, str, env),
            public_hostname=setting_as(PUBLIC_HOSTNAME_ENV, defaults.public_hostname, str, env),
            auth_cache_seconds=cache_seconds,
            searches_per_credential=per_credential,
            service=ServiceSettings(retrieve_per_minute=setting_as(RATE_ENV, service.retrieve_per_minute, int, env),
                                    retention=retention_from_env(env), cache_seconds=cache_seconds),
            worker=WorkerSettings.from_env(env),
            parse_processes=processes_from_env(env),
            mcp=McpOptions(profile=setting_as(PROFILE_ENV, McpOptions().profile, str, env),
                           output_schemas=env.get(OUTPUT_SCHEMAS_ENV) == "1",
                           streams=StreamLimits(per_credential=per_credential,
                                                total=setting_as(STREAMS_ENV, streams.total, int, env),
                                                idle_seconds=setting_as(STREAM_IDLE_ENV, streams.idle_seconds,
                                                                        float, env))),
        )
