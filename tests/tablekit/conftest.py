import shutil
from pathlib import Path

import pytest

from armbench.tablekit import TableDomain

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def cities_folder(root: Path) -> Path:
    """The cities table domain as `bench domain new` and an edit leave it, with its table built."""
    folder = root / "cities"
    (folder / "source").mkdir(parents=True)
    shutil.copy(FIXTURES / "cities_domain" / "domain.yaml", folder)
    shutil.copy(FIXTURES / "cities.csv", folder / "source" / "cities.csv")
    shutil.copy(FIXTURES / "cities.SOURCE.md", folder / "source" / "SOURCE.md")
    (folder / "__init__.py").write_text("")
    TableDomain(str(folder / "__init__.py")).build(folder)
    return folder


@pytest.fixture(scope="session")
def cities(tmp_path_factory) -> TableDomain:
    return TableDomain(str(cities_folder(tmp_path_factory.mktemp("domains")) / "__init__.py"))
