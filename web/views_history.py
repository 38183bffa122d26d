"""History: the matches in the game log, each hand's details, C4 export."""

from __future__ import annotations

import json
import time
from typing import Any

from flask import Blueprint, Response, jsonify, render_template

from companion.core.game import GameError
from companion.core.records import read_hand
from web.chart import totals_chart
from web.common import ApiError, game_log
from web.present import card_view, chart_series, page_view, seat_name, winner_text

bp = Blueprint("history", __name__)


def _find(number: int) -> dict[str, Any]:
    for m in game_log().matches():
        if m["number"] == number:
            return m
    raise ApiError(404, f"no match {number} in the log")


def _record(number: int) -> dict[str, Any]:
    try:
        return game_log().match_record(number)
    except GameError as exc:
        raise ApiError(404, str(exc)) from None


def _when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts)) if ts else "–"


def _summary(m: dict[str, Any]) -> dict[str, Any]:
    return {
        "number": m["number"],
        "started": _when(m.get("started", 0)),
        "mode": m["mode"] + (" (fixed pairs)" if m.get("pairing") == "fixed" else ""),
        "goal": m["goal"],
        "hands": m["hand_count"],
        "totals": ", ".join(f"{k} {v}" for k, v in m["totals"].items()) or "–",
        "winner": winner_text(m) or ("in progress" if not m["over"] else ""),
    }


@bp.get("/history")
def matches() -> str:
    rows = [_summary(m) for m in reversed(game_log().matches())]
    return render_template("history.html", matches=rows)


def _hand_details(match: dict[str, Any], record: dict[str, Any]) -> list[dict[str, Any]]:
    by_person = match["mode"] == "three" and match.get("pairing") != "fixed"
    out = []
    for n, (entry, rec) in enumerate(zip(match["hands"], record["hands"], strict=False), 1):
        _, hand = read_hand(rec, record["mode"])
        c3 = hand.to_dict()
        setup = entry.get("setup", {})
        nm = setup.get("names") or {}
        tricks = []
        for t_no, t in enumerate(c3["tricks"], 1):
            tricks.append({
                "n": t_no,
                "plays": [{"who": seat_name(p["seat"], nm), **card_view(p["card"])}
                          for p in t["plays"]],
                "winner": seat_name(t["winner"], nm) if t["winner"] else None,
                "lies": t.get("lies", False),
            })
        out.append({
            "n": n,
            "dealer": seat_name(setup.get("dealer"), nm) if setup.get("dealer") else "–",
            "leader": seat_name(setup.get("leader"), nm) if setup.get("leader") else "–",
            "soloist": seat_name(setup.get("soloist"), nm) if setup.get("soloist") else None,
            "moon_seats": setup.get("moon_seats", []),
            "parties": [{"party": p, "souls": c3["souls"][p], "multiplier": c3["multiplier"][p],
                         "score": c3["score"][p]} for p in ("sun", "moon")],
            "people": entry.get("people") if by_person else None,
            "tricks": tricks,
            "neutral": [card_view(c) for c in c3["neutral"]],
        })
    return out


@bp.get("/history/<int:number>")
def match_page(number: int) -> str:
    m = _find(number)
    record = _record(number)
    view = page_view({"match": m, "hand": {}, "version": 0})
    return render_template(
        "match.html", m=_summary(m), v=view, hands=_hand_details(m, record),
        chart=totals_chart(chart_series(m, view["by_person"]), m["goal"]),
        current=number == game_log().snapshot()["match"]["number"],
    )


@bp.get("/history/<int:number>/export")
def export(number: int) -> Response:
    """The match as a C4 record file (complete hands), for `twilight-companion score`."""
    record = _record(number)
    resp = Response(json.dumps(record, indent=2) + "\n", mimetype="application/json")
    resp.headers["Content-Disposition"] = f'attachment; filename="twilight-match-{number}.json"'
    return resp


@bp.get("/api/matches")
def api_matches() -> Response:
    """Every match in the log: number, started, mode, goal, hands, totals, over, winner."""
    return jsonify({"matches": game_log().matches()})


@bp.get("/api/matches/<int:number>")
def api_match(number: int) -> Response:
    """The C4 record of one match."""
    return jsonify(_record(number))
