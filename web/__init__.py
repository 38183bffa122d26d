"""The score page on the players' phones, table controls, setup and history.

R1–R9 are the sections of docs/rules.md; C1–C9 those of docs/interfaces.md
(which also lists these routes).

Public API::

    app = create_app(log, config={"DATA_DIR": folder, "TABLE_PIN": None},
                     frames=None, leds=None, annotate=None, crop_card=None,
                     enrol_deck=None)
    print_banner(page_url(host, port), app.config["TABLE_PIN"])
    serve(app, host, port, threads=24)          # waitress; blocks
    server = make_server(app, host, port)       # or: server.run() in a thread, .close()

Routes (JSON under ``/api``; controls take JSON with ``X-CSRF-Token`` or a form
with ``csrf_token``, and need the table PIN session):

- ``GET /`` score page; ``GET /part/score``, ``/part/table`` its live fragments
- ``GET /api/state`` (C9: ``hand`` C3, ``match`` C4 output, extras; ETag),
  ``/api/version``, ``/api/events`` (server-sent events), ``/api/choices/<k>``
- ``GET /api/session``; ``POST /api/login`` {pin}, ``/api/logout``
- ``POST /api/undo``, ``/api/correct`` {index, card}, ``/api/play`` {seat, card},
  ``/api/dismiss``,
  ``/api/setup`` {dealer, leader, soloist}, ``/api/names`` {names},
  ``/api/new-hand`` {dealer, leader, soloist, abandon}, ``/api/new-match``
  {mode, goal, pairing, soloist, dealer, names}, ``/api/mode`` {mode, soloist,
  pairing}, ``/api/goal`` {goal}, ``/api/mirror`` {mirror}, ``/api/leds/test``
- ``GET /history``, ``/history/<n>``, ``/history/<n>/export`` (C4 file),
  ``/api/matches``, ``/api/matches/<n>``
- ``GET /setup``, ``/setup/camera.jpg``, ``/setup/deck/<card>.png``, ``/api/deck``;
  ``POST /api/deck/capture`` {card}, ``/api/deck/reset``, ``/api/deck/finish`` {name}
"""

from web.app import create_app, make_server, page_url, print_banner, serve, stop_server

__all__ = ["create_app", "make_server", "page_url", "print_banner", "serve", "stop_server"]
