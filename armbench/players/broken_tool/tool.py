"""A tool that fails on purpose, in each way a synthesized tool can: `scripted/synth-broken` submits
it, so tests see every failure reach the model as a tool error, never a crash."""
import time


def broken_query(mode: str = "raise") -> dict:
    if mode == "raise":
        raise RuntimeError("this tool is broken on purpose")
    if mode == "hang":
        time.sleep(10**6)  # outlives any call timeout
    if mode == "huge":
        return {"rows": ["x" * 1_000] * 1_000}  # a million characters, far over the result limit
    return {"mode": mode}
