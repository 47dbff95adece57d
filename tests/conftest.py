from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support import CONTRACTS_DIR

ROOT = Path(__file__).resolve().parent.parent
SEEDS = Path(__file__).resolve().parent / "data" / "seeds"

SEED_DE_RETRIEVE = SEEDS / "000_e53dc5bdc01059a0.txt"
SEED_HE_RETRIEVE_REST = SEEDS / "001_9294db21519312e8.txt"
SEED_ZH_RETRIEVE = SEEDS / "002_54f73b6c04777019.txt"
SEED_FR_STATUS = SEEDS / "003_c7d0e9a6110c0ee7.txt"
SEED_DE_GET_DOCUMENTS = SEEDS / "004_321418b17f96373e.txt"


@pytest.fixture
def contracts_copy(tmp_path: Path) -> Path:
    """A writable copy of the contracts folder (data only), for tests that change a contract."""
    target = tmp_path / "contracts"
    shutil.copytree(CONTRACTS_DIR, target, ignore=shutil.ignore_patterns("*.py", "models", "__pycache__"))
    return target


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
