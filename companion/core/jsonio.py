"""JSON for the ``score`` path without importing :mod:`json`.

``import json`` pulls in ``re`` and ``enum`` and costs about as much as the rest
of the ``score`` command's start-up together. The C accelerator ``_json`` that
:mod:`json` itself uses does the real work here: its scanner parses, its string
encoder quotes. Where ``_json`` is missing this falls back to :mod:`json`.
Errors are :class:`ValueError` with the position, as ``json`` gives them.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

try:
    import _json
except ImportError:  # pragma: no cover - other Pythons
    _json = None  # type: ignore[assignment]

_WS = " \t\n\r"


class _Context:
    """What ``_json.make_scanner`` reads from a JSONDecoder."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    memo: dict[str, str] = {}

    @staticmethod
    def parse_constant(name: str) -> float:
        return {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}[name]


_scan = _json.make_scanner(_Context()) if _json is not None else None  # type: ignore[arg-type]


def loads(text: str) -> Any:
    """Parse one JSON document; a :class:`ValueError` says where it is malformed."""
    if _scan is None:  # pragma: no cover
        import json

        return json.loads(text)
    start = len(text) - len(text.lstrip(_WS))
    try:
        value, end = _scan(text, start)
        if text[end:].strip(_WS):
            raise ValueError("extra data")
    except (ValueError, StopIteration, SystemError, RecursionError):
        # Malformed: let the json module say exactly what and where.
        import json

        return json.loads(text)
    return value


def dumps(value: Any) -> str:
    """Compact JSON of dicts, lists, strings, ints, floats, booleans and None."""
    if _json is None:  # pragma: no cover
        import json

        return json.dumps(value)
    out: list[str] = []
    _encode(value, out.append, _json.encode_basestring_ascii)
    return "".join(out)


def _encode(value: Any, put: Any, quote: Any) -> None:
    if isinstance(value, str):
        put(quote(value))
    elif value is None:
        put("null")
    elif value is True:
        put("true")
    elif value is False:
        put("false")
    elif isinstance(value, int):
        put(int.__repr__(value))
    elif isinstance(value, float):
        put(float.__repr__(value))
    elif isinstance(value, dict):
        put("{")
        first = True
        for key, item in value.items():
            if not first:
                put(", ")
            first = False
            put(quote(str(key)))
            put(": ")
            _encode(item, put, quote)
        put("}")
    elif isinstance(value, (list, tuple)):
        put("[")
        for i, item in enumerate(value):
            if i:
                put(", ")
            _encode(item, put, quote)
        put("]")
    else:
        raise TypeError(f"cannot write {type(value).__name__} as JSON")
