"""moon: the USGS Gazetteer of Planetary Nomenclature (Moon, Phobos, Deimos), a table domain in domain.yaml."""
from armbench.domains.spec import Domain
from armbench.tablekit import TableDomain

KIT = TableDomain(__file__)
DOMAIN = Domain.in_folder(__file__, **KIT.declaration(__name__))
create_app, tool_classes, build = KIT.create_app, KIT.tool_classes, KIT.build
