"""The contract-first generator. Its interface is the command line, `evidencekit codegen
{generate,check,lock,diff}` (also `python -m evidencekit.codegen`), and the `[tool.evidencekit.codegen]`
table it reads (docs/toolkit.md); every module beneath this package is private."""

__all__: list[str] = []
