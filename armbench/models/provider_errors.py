"""What a failed provider call was, in plain words: its class first, then the provider's own words.

LiteLLM's exception names mislead on their own: a host that refuses connections arrives as
"InternalServerError ... Connection error" (no server was reached), a 403 as a bare `APIError`.
So a failure is classified by its HTTP status and by the exceptions it was raised from:

    cannot connect    no server answered: DNS, a refused connection, TLS       retried
    timed out         no reply within the request timeout (or a 408)           retried
    rate limited      429, with the wait the provider asked for                retried
    server error      5xx                                                      retried
    try again         409 or 425: the provider asks for the request again      retried
    authentication    401 or 403                                               stops the set
    bad request       400 or 422, with the provider's message                  stops the set on a
                                                                               run's first call
    not found         404: usually a model name the provider does not know     stops the set
    context window    the conversation outgrew the model: the agent's miss
    provider error    anything else

A set stops at an authentication failure, an unknown model, or a bad request to a run's first
model call: that request has the same shape in every run (prompt, tools, settings), so every run
would fail the same way. A bad request later in a conversation is about that conversation.
"""
from __future__ import annotations

import socket
import ssl
from collections.abc import Iterator
from enum import StrEnum

from armbench.models.retry import retry_after


class FailureKind(StrEnum):
    cannot_connect = "cannot connect"
    timed_out = "timed out"
    rate_limited = "rate limited"
    server_error = "server error"
    try_again = "asked to try again"
    authentication = "authentication failed"
    bad_request = "bad request"
    not_found = "not found"
    context_window = "context window exceeded"
    other = "provider error"


# The same request may succeed a moment later; every other failure would fail the same way again.
RETRIED = {FailureKind.cannot_connect, FailureKind.timed_out, FailureKind.rate_limited, FailureKind.server_error,
           FailureKind.try_again}
STOPS_THE_SET = {FailureKind.authentication, FailureKind.not_found}  # and a bad first request
# Kinds whose HTTP status tells the reader something, so the description shows it.
SAYS_ITS_STATUS = {FailureKind.authentication, FailureKind.rate_limited, FailureKind.server_error,
                   FailureKind.try_again, FailureKind.bad_request, FailureKind.not_found}
# Raised below LiteLLM when no server answered (by name: httpx and aiohttp need not be loaded).
CONNECT_ERRORS = {"ConnectError", "ClientConnectorError", "ClientConnectorDNSError", "ClientConnectorSSLError"}
TIMEOUT_ERRORS = {"Timeout", "APITimeoutError", "TimeoutException", "ReadTimeout", "ConnectTimeout"}


def causes(error: BaseException) -> Iterator[BaseException]:
    """The error and what it was raised from, outermost first."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def classify(error: BaseException) -> FailureKind:
    chain = list(causes(error))
    names = {type(cause).__name__ for cause in chain}
    status = getattr(error, "status_code", None)
    if "ContextWindowExceededError" in names:
        return FailureKind.context_window
    if names & TIMEOUT_ERRORS or status == 408 or any(isinstance(cause, TimeoutError) for cause in chain):
        return FailureKind.timed_out
    if names & CONNECT_ERRORS or any(isinstance(cause, (ConnectionRefusedError, socket.gaierror, ssl.SSLError))
                                     for cause in chain):
        return FailureKind.cannot_connect
    if status in (401, 403):
        return FailureKind.authentication
    if status == 429:
        return FailureKind.rate_limited
    if status in (400, 422):
        return FailureKind.bad_request
    if status == 404:
        return FailureKind.not_found
    if isinstance(status, int) and status >= 500:
        return FailureKind.server_error
    if status in (409, 425):
        return FailureKind.try_again
    if any(isinstance(cause, ConnectionError) for cause in chain):  # a reset that escaped LiteLLM's mapping
        return FailureKind.cannot_connect
    return FailureKind.other


def is_transient(error: BaseException) -> bool:
    """Worth another attempt: the call's failure is of a class that is retried (the table above)."""
    return classify(error) in RETRIED


def describe(error: BaseException, kind: FailureKind) -> str:
    """`kind` (with the status, and a 429's wait) first, then the provider's words."""
    status = getattr(error, "status_code", None)
    details = [str(status)] if status and kind in SAYS_ITS_STATUS else []
    wait = retry_after(error) if kind is FailureKind.rate_limited else None
    if wait is not None:
        details.append(f"retry after {wait:g} s")
    name = type(error).__name__
    words = str(error) if name in str(error) else f"{name}: {error}"
    said = f"{kind} ({', '.join(details)})" if details else str(kind)
    return f"{said}: {words}"
