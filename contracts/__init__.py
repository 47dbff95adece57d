"""The published contracts (data) and the small runtime that reads and enforces them.

`contracts.loader` reads them, `contracts.validation` enforces them (jsonschema),
`contracts.models` holds the generated pydantic models, `contracts.wire` parses JSON into them.
"""
