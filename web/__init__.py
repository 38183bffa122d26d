"""The score page on the players' phones, table controls, setup and history (issue 7).

``create_app(log, ...)`` builds the Flask app around a game log, ``serve(app, host,
port)`` runs it with waitress, ``print_banner(url, pin)`` prints the address, the
table PIN and a QR code.
"""

from web.app import create_app, page_url, print_banner, serve

__all__ = ["create_app", "page_url", "print_banner", "serve"]
