"""The contract runtime (toolkit): `loader` reads a contracts folder and hashes each operation,
`validation` enforces the published schemas (jsonschema-rs, jsonschema), `spec` is what generated
code knows of an operation, `wire` parses JSON into the generated models. The operation folders
beside these modules are the evidence service's own published contracts (data).
"""
