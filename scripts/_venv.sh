# Sourced by scripts/*: create .venv and install the project with its dev extras when missing or stale.
PYTHON_BIN=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "== creating .venv with $($PYTHON_BIN --version)"
  "$PYTHON_BIN" -m venv .venv
fi
stamp=.venv/.evidencekit-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "== installing evidencekit[dev] into .venv"
  .venv/bin/python -m pip install --quiet --upgrade pip 2>&1 | grep -v "^WARNING: Location" || true
  .venv/bin/python -m pip install --quiet -e '.[dev]' 2>&1 | grep -v "^WARNING: Location" || true
  .venv/bin/python -c "import evidencekit.codegen, evidencekit.contracts, hypothesis_jsonschema, datamodel_code_generator" \
    || { echo "installation failed" >&2; exit 1; }
  touch "$stamp"
fi
