# Sourced by scripts/*: create .venv and install the project with its dev extras when missing or stale.
PYTHON_BIN=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "== creating .venv with $($PYTHON_BIN --version)"
  "$PYTHON_BIN" -m venv .venv
fi
# EVIDENCEKIT_EXTRAS: what to install beside the project: "dev" (tests, generator, benchmarks, the
# service; the default) or "service" (only what serving the research service needs: scripts/serve).
# A dev install serves too.
extras=${EVIDENCEKIT_EXTRAS-dev}
stamp=.venv/.evidencekit-installed${extras:+-$extras}
if [ "$extras" != dev ] && [ -f .venv/.evidencekit-installed-dev ] && [ ! pyproject.toml -nt .venv/.evidencekit-installed-dev ]; then
  stamp=.venv/.evidencekit-installed-dev
fi
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "== installing evidencekit${extras:+[$extras]} into .venv"
  .venv/bin/python -m pip install --quiet --upgrade pip 2>&1 | grep -v "^WARNING: Location" || true
  .venv/bin/python -m pip install --quiet -e ".${extras:+[$extras]}" 2>&1 | grep -v "^WARNING: Location" || true
  if [ "$extras" = dev ]; then
    check="import evidencekit.codegen, evidencekit.contracts, hypothesis_jsonschema, datamodel_code_generator"
  else
    check="import evidencekit.server.evidence.app"
  fi
  .venv/bin/python -c "$check" || { echo "installation failed" >&2; exit 1; }
  touch "$stamp"
fi
# The dev extras' tools that run as commands of their own environment (scripts/tools/*.txt): made
# beside .venv, again when their requirements change
if [ "$extras" = dev ]; then
  for requirements in scripts/tools/*.txt; do
    tool=var/tools/$(basename "$requirements" .txt)
    if [ ! -f "$tool/.installed" ] || [ "$requirements" -nt "$tool/.installed" ]; then
      echo "== installing $(basename "$requirements" .txt) into $tool"
      rm -rf "$tool"
      "$PYTHON_BIN" -m venv "$tool"
      "$tool/bin/python" -m pip install --quiet -r "$requirements" 2>&1 | grep -v "^WARNING: Location" || true
      "$tool/bin/python" -c "import $(basename "$requirements" .txt)" || { echo "installing $tool failed" >&2; exit 1; }
      touch "$tool/.installed"
    fi
  done
fi
