"""The score page, its live parts, the state API and the event stream (C9)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, render_template, request

from web.chart import totals_chart
from web.common import ApiError, at_table, csrf_token, game_log, integer, parts
from web.present import card_view, page_view

bp = Blueprint("score", __name__)

#: Fragments of the score page the script swaps in when the game changes.
PARTS = {"score": "_score.html", "table": "_table.html"}


def _context(snap: dict[str, Any]) -> dict[str, Any]:
    view = page_view(snap)
    return {
        "v": view,
        "snap": snap,
        "chart": totals_chart(view["series"], view["goal"]),
        "table": at_table(),
        "csrf": csrf_token(),
        "boot": parts().boot,
    }


def _etag(snap: dict[str, Any], extra: str = "") -> str:
    return f"{parts().boot}-{snap['version']}{extra}"


def _not_modified(tag: str) -> Response | None:
    if tag in request.if_none_match:
        resp = Response(status=304)
        resp.set_etag(tag)
        return resp
    return None


@bp.get("/")
def index() -> str:
    """The score page (server-rendered; the script keeps it live)."""
    return render_template("score.html", **_context(game_log().snapshot()))


@bp.get("/part/<name>")
def part(name: str) -> Response:
    """One live fragment of the score page, with an ETag so unchanged parts cost nothing."""
    if name not in PARTS:
        raise ApiError(404, f"no page part {name!r}")
    snap = game_log().snapshot()
    tag = _etag(snap, f"-{name}-{int(at_table())}")
    cached = _not_modified(tag)
    if cached is not None:
        return cached
    resp = Response(render_template(PARTS[name], **_context(snap)), mimetype="text/html")
    resp.set_etag(tag)
    resp.headers["Cache-Control"] = "no-cache"
    resp.headers["X-State-Version"] = str(snap["version"])
    return resp


@bp.get("/api/state")
def state() -> Response:
    """The whole state (C9): ``hand`` in the C3 form, ``match`` in the C4 output form,
    plus refused, settings, status, version. Honours If-None-Match."""
    snap = game_log().snapshot()
    tag = _etag(snap)
    cached = _not_modified(tag)
    if cached is not None:
        return cached
    body = dict(snap)
    body["boot"] = parts().boot
    resp = jsonify(body)
    resp.set_etag(tag)
    resp.headers["Cache-Control"] = "no-cache"
    return resp


@bp.get("/api/version")
def version() -> Response:
    """The state's version and the server's boot id: cheap polling when events fail."""
    resp = jsonify({"version": game_log().version, "boot": parts().boot})
    resp.headers["Cache-Control"] = "no-store"
    return resp


@bp.get("/api/events")
def events() -> Response:
    """Server-sent events: one ``data: {version, boot}`` at once and after every
    change, a comment as heartbeat, and a ``bye`` event when the stream's bounded
    lifetime is over (the page reconnects at once; ``retry`` covers restarts)."""
    log = game_log()
    comp = parts()
    boot = comp.boot
    lifetime = float(current_app.config["SSE_LIFETIME"])
    heartbeat = float(current_app.config["SSE_HEARTBEAT"])
    if not comp.open_stream(int(current_app.config["SSE_MAX_STREAMS"])):
        # Every stream holds a server thread: past the cap, pages poll /api/version.
        raise ApiError(503, "too many live pages open: this page polls instead",
                       headers={"Retry-After": "10"})

    released = threading.Event()

    def release() -> None:
        if not released.is_set():
            released.set()
            comp.close_stream()

    def stream() -> Iterator[str]:
        deadline = time.monotonic() + lifetime
        yield "retry: 1000\n\n"
        snap: dict[str, Any] | None = log.snapshot()
        seen = -1
        while True:
            if snap is not None:
                seen = snap["version"]
                yield f"data: {json.dumps({'version': seen, 'boot': boot})}\n\n"
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                release()  # free the place first: the page reconnects as soon as it reads bye
                yield "event: bye\ndata: {}\n\n"
                return
            snap = log.wait(seen, min(heartbeat, remaining))
            if snap is None:
                yield ": heartbeat\n\n"

    resp = Response(stream(), mimetype="text/event-stream")
    resp.call_on_close(release)  # runs even if the stream never started
    resp.headers["Cache-Control"] = "no-cache"
    resp.headers["X-Accel-Buffering"] = "no"
    return resp


@bp.get("/api/choices/<int:index>")
def choices(index: int) -> Response:
    """The cards that could replace play ``index`` (from 1) of the current hand."""
    integer({"index": index}, "index", low=1, high=28)
    log = game_log()
    snap = log.snapshot()
    plays = snap["hand"].get("plays") or []
    if index > len(plays):
        raise ApiError(404, f"no play {index} in this hand ({len(plays)} played)")
    current = plays[index - 1]
    return jsonify({
        "index": index,
        "seat": current["seat"],
        "card": current["card"],
        "choices": [card_view(c) for c in log.correction_choices(index)],
    })
