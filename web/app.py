"""The Flask app factory, the waitress server and the start-up banner.

>>> app = create_app(log, config={"DATA_DIR": folder})      # doctest: +SKIP
>>> serve(app, "0.0.0.0", 8000)                               # doctest: +SKIP
"""

from __future__ import annotations

import datetime
import logging
import sys
import threading
from collections.abc import Callable, Mapping
from typing import IO, Any

from flask import Flask, Response, jsonify, render_template, request
from werkzeug.exceptions import HTTPException

from companion.core.gamelog import GameLog, LogError
from companion.core.rules import RuleError
from web import pin as pins
from web.common import ApiError, WebParts, is_form
from web.present import plain_refusal

log = logging.getLogger(__name__)

#: Threads for waitress: every open page holds one for its event stream.
DEFAULT_THREADS = 24

DEFAULTS: dict[str, Any] = {
    "SSE_LIFETIME": 55.0,        # seconds one event stream lives before the page reconnects
    "SSE_HEARTBEAT": 10.0,       # seconds between heartbeat comments
    "SSE_MAX_STREAMS": DEFAULT_THREADS - 4,  # open streams (20 phones); the rest poll
    "PIN_FAIL_SLEEP": 0.3,       # a short pause on each wrong PIN (never long)
    "MAX_CONTENT_LENGTH": 64 * 1024,
    "SESSION_COOKIE_NAME": "twilight_session",
    "SESSION_COOKIE_HTTPONLY": True,
    "SESSION_COOKIE_SAMESITE": "Lax",
    "PERMANENT_SESSION_LIFETIME": datetime.timedelta(hours=24),
}


def create_app(log: GameLog, *, config: Mapping[str, Any] | None = None, frames: Any = None,
               leds: Any = None, annotate: Callable[[Any], Any] | None = None,
               crop_card: Callable[[Any], Any] | None = None,
               enrol_deck: Callable[[Any, Any], Any] | None = None) -> Flask:
    """The web app around one game log.

    ``config`` keys (case-insensitive): ``DATA_DIR`` (PIN and session secret files;
    default: the game log's folder), ``TABLE_PIN`` (else generated and kept),
    ``SECRET_KEY`` (else generated and kept), ``SSE_LIFETIME``, ``SSE_HEARTBEAT``,
    ``SSE_MAX_STREAMS``, ``PIN_FAIL_SLEEP``, any Flask setting.

    The rest come from the wiring, each optional (the page says what is not
    available): ``frames.latest()`` gives camera frames, ``leds.test()`` tests the
    LEDs, ``annotate(frame)`` draws the recognition on a frame, ``crop_card(frame)``
    cuts the one card lying alone out of a frame (None: no card found), and
    ``enrol_deck(folder, out)`` teaches a deck from a C5 folder (raises
    ``ValueError`` or ``OSError`` naming what is wrong).
    """
    app = Flask(__name__)
    app.config.update(DEFAULTS)
    app.config.update({str(k).upper(): v for k, v in (config or {}).items()})
    data_dir = str(app.config.get("DATA_DIR") or log.path.parent)
    app.config["DATA_DIR"] = data_dir
    if not app.config.get("SECRET_KEY"):
        app.config["SECRET_KEY"] = pins.session_secret(data_dir)
    table_pin = pins.table_pin(data_dir, app.config.get("TABLE_PIN"))
    app.config["TABLE_PIN"] = table_pin
    app.extensions["twilight"] = WebParts(
        log=log, pin=table_pin,
        fingerprint=pins.pin_fingerprint(table_pin, str(app.config["SECRET_KEY"])),
        throttle=pins.Throttle(), frames=frames, leds=leds, annotate=annotate,
        crop_card=crop_card, enrol_deck=enrol_deck,
        data_dir=data_dir,
    )

    from web import views_history, views_score, views_setup, views_table

    for bp in (views_score.bp, views_table.bp, views_history.bp, views_setup.bp):
        app.register_blueprint(bp)
    _errors(app)
    app.add_url_rule("/manifest.webmanifest", "manifest", _manifest)

    @app.after_request
    def _headers(resp: Response) -> Response:
        resp.headers.setdefault("X-Content-Type-Options", "nosniff")
        resp.headers.setdefault("Referrer-Policy", "same-origin")
        resp.headers.setdefault("X-Frame-Options", "DENY")
        if resp.mimetype == "text/html":
            resp.headers.setdefault(
                "Content-Security-Policy",
                "default-src 'self'; img-src 'self' data:; style-src 'self'; "
                "script-src 'self'; connect-src 'self'; frame-ancestors 'none'; "
                "form-action 'self'; base-uri 'none'",
            )
        return resp

    return app


def _manifest() -> Response:
    """The web app manifest: "add to home screen" opens the score page full screen."""
    import json

    static = "/static/"
    body = {
        "name": "Twilight table companion", "short_name": "Twilight",
        "description": "The score of the Twilight game on this table",
        "start_url": "/", "scope": "/", "display": "standalone",
        "background_color": "#14132b", "theme_color": "#14132b",
        "icons": [
            {"src": f"{static}icon-192.png", "sizes": "192x192", "type": "image/png"},
            {"src": f"{static}icon-512.png", "sizes": "512x512", "type": "image/png"},
            {"src": f"{static}icon-512.png", "sizes": "512x512", "type": "image/png",
             "purpose": "maskable"},
            {"src": f"{static}icon.svg", "sizes": "any", "type": "image/svg+xml"},
        ],
    }
    resp = Response(json.dumps(body), mimetype="application/manifest+json")
    resp.headers["Cache-Control"] = "max-age=3600"
    return resp


def _wants_json() -> bool:
    if is_form():
        return False
    return request.path.startswith("/api/") or request.accept_mimetypes.best == "application/json"


def _error(status: int, message: str, rule: str | None = None,
           headers: Mapping[str, str] | None = None, plain: str | None = None) -> Response:
    if _wants_json():
        body: dict[str, Any] = {"error": message, "status": status}
        if rule:
            body["rule"] = rule
        if plain:
            body["message"] = plain  # the same in plain words, for people
        resp = jsonify(body)
    else:
        resp = Response(render_template("error.html", status=status, message=message),
                        mimetype="text/html")
    resp.status_code = status
    for key, value in (headers or {}).items():
        resp.headers[key] = value
    return resp


def _errors(app: Flask) -> None:
    @app.errorhandler(ApiError)
    def _api(exc: ApiError) -> Response:
        return _error(exc.status, exc.message, exc.rule, exc.headers)

    @app.errorhandler(RuleError)
    def _rule(exc: RuleError) -> Response:
        # The rules refused: nothing was stored, the game is as it was (R9).
        return _error(409, str(exc), getattr(exc, "rule", None), plain=plain_refusal(exc))

    @app.errorhandler(LogError)
    def _storage(exc: LogError) -> Response:
        log.error("web: game log trouble: %s", exc)
        return _error(503, f"the game log cannot be written: {exc}")

    @app.errorhandler(HTTPException)
    def _http(exc: HTTPException) -> Response:
        status = exc.code or 500
        message = exc.description or exc.name
        if status == 404:
            message = f"nothing here: {request.path}"
        elif status == 405:
            message = f"{request.method} is not allowed on {request.path}"
        elif status == 413:
            message = "the request is too large"
        return _error(status, message)


def make_server(app: Flask, host: str = "0.0.0.0", port: int = 8000, *,
                threads: int = DEFAULT_THREADS, **options: Any) -> Any:
    """A waitress server for the app, not yet running: ``.run()`` serves until
    ``.close()``; ``.effective_port`` is the port bound (``port=0`` picks a free one)."""
    from waitress.server import create_server

    # Keep a few threads free of event streams for the ordinary requests.
    app.config["SSE_MAX_STREAMS"] = min(int(app.config["SSE_MAX_STREAMS"]), max(1, threads - 4))
    options.setdefault("channel_timeout", 120)
    options.setdefault("ident", "twilight-companion")
    return create_server(app, host=host, port=port, threads=threads, **options)


def serve(app: Flask, host: str = "0.0.0.0", port: int = 8000, *,
          threads: int = DEFAULT_THREADS, **options: Any) -> None:
    """Run the app with waitress until interrupted. Threads: one per open page's
    event stream plus a few for requests; 24 serves a table of phones."""
    server = make_server(app, host, port, threads=threads, **options)
    try:
        server.run()
    finally:
        server.close()


def stop_server(server: Any, timeout: float = 5.0) -> None:
    """Stop a server made by :func:`make_server` from any thread.

    Closing its sockets from outside races with the select() of the thread that
    runs it (EBADF); instead the close runs inside that loop, through waitress's
    own trigger, and the loop ends once nothing is left to watch."""
    from waitress import wasyncore

    done = threading.Event()
    socket_map = getattr(server, "_map", None)
    trigger = getattr(server, "trigger", None)

    def close_all() -> None:
        wasyncore.close_all(socket_map, ignore_all=True)
        done.set()

    if trigger is not None and socket_map is not None:
        try:
            trigger.pull_trigger(close_all)
        except OSError:
            pass
        if not done.wait(timeout):  # the loop was not running: close from here
            close_all()
    else:
        server.close()
    dispatcher = getattr(server, "task_dispatcher", None)
    if dispatcher is not None:
        dispatcher.shutdown(timeout=timeout)


def print_banner(url: str, pin: str | None = None, *, file: IO[str] | None = None) -> None:
    """Print the page's address, the table PIN and a QR code of the address, or, when
    the address is this computer's own (127.0.0.1), that phones cannot open it and how
    to change that."""
    import segno

    out = file or sys.stdout
    if only_this_computer(url):
        print(f"Twilight table companion: open {url} in a browser on this computer. Only "
              "this computer can open it: to let phones on the network open the page, "
              "start with --host 0.0.0.0 (or set [web] host = \"0.0.0.0\" in the config)",
              file=out)
    else:
        print(f"Twilight table companion: open {url} on your phones", file=out)
    if pin:
        print(f"Table PIN (for undo, corrections and setup): {pin}", file=out)
    if only_this_computer(url):
        out.flush()
        return
    qr = segno.make(url, error="m")
    try:
        qr.terminal(out=out, compact=True)
    except (TypeError, UnicodeEncodeError):
        qr.terminal(out=out)
    out.flush()


def page_url(host: str, port: int) -> str:
    """The address phones should open: for an all-interfaces bind, this machine's
    address on the local network (no packet is sent to find it)."""
    import socket

    if host in ("", "0.0.0.0", "::"):
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                s.connect(("10.255.255.255", 1))
                host = s.getsockname()[0]
        except OSError:
            host = socket.gethostname()
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}/"


def only_this_computer(url: str) -> bool:
    """Whether *url* names this computer's loopback address, which no phone can open."""
    from urllib.parse import urlsplit

    host = (urlsplit(url).hostname or "").lower()
    return host == "localhost" or host.startswith("127.") or host == "::1"
