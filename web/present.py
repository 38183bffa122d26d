"""Turn a game snapshot into what the pages show. Pure functions, no Flask.

The views only format: everything here reads the snapshot the game log made
(:meth:`companion.core.gamelog.GameLog.snapshot`) and computes nothing the rules
core has not already decided, apart from running totals for the table of hands.
"""

from __future__ import annotations

from typing import Any

from companion.core.cards import CLERIC_NUMERALS
from companion.core.match import MAGIC_NUMBERS, STANDARD_GOAL

SEATS = ("north", "east", "south", "west")
PARTIES = ("sun", "moon")
SHRINE_TIMES = {"altar": 1, "temple": 2, "obelisk": 3}
#: Colours (CSS classes) for up to four people in three-player matches.
PERSON_CLASSES = ("p1", "p2", "p3", "p4")


def card_view(card_id: str | None) -> dict[str, str]:
    """Short face and full name of a card id (C1), for the little drawn cards; None is
    a gap (a card laid that nobody has named yet).

    >>> card_view("moon-high-priest")["short"]
    'II'
    """
    if card_id is None:
        return {"id": "", "cult": "unknown", "short": "?", "name": "not read yet",
                "kind": "gap"}
    cult, _, name = card_id.partition("-")
    if name.startswith("souls-"):
        n = name.split("-")[1]
        short, full, kind = n, f"{n} souls", "souls"
    elif name in CLERIC_NUMERALS:
        short, full, kind = CLERIC_NUMERALS[name], name.replace("-", " ").capitalize(), "cleric"
    elif name in SHRINE_TIMES:
        short, full, kind = f"×{SHRINE_TIMES[name]}", name.capitalize(), "shrine"
    elif name == "purgatory":
        short, full, kind = "P", "Purgatory", "purgatory"
    else:
        short, full, kind = "?", card_id, "unknown"
    if cult not in PARTIES:
        cult = "unknown"
    return {"id": card_id, "cult": cult, "short": short, "name": full, "kind": kind}


def seat_name(seat: str | None, names: dict[str, Any] | None = None) -> str:
    """A person's name if the table gave one, else the seat ("North")."""
    if not seat:
        return "–"
    name = (names or {}).get(seat)
    return str(name) if name else seat.capitalize()


def goal_text(goal: str) -> str:
    if goal == "magic":
        return "exactly 333, 666 or 999, or 1000+"
    return "1000"


def to_go(total: int, goal: str) -> str:
    """What a total still needs, in plain words: "needs 1000" before any points,
    "123 more for 1000", "95 more for exactly 333"."""
    if total == 0:
        return "needs exactly 333, 666 or 999, or 1000" if goal == "magic" else \
            f"needs {STANDARD_GOAL}"
    if goal == "magic":
        for magic in MAGIC_NUMBERS:
            if total < magic:
                return f"{magic - total} more for exactly {magic}"
    if total >= STANDARD_GOAL:
        return "goal reached"
    return f"{STANDARD_GOAL - total} more for {STANDARD_GOAL}"


def winner_text(match: dict[str, Any]) -> str | None:
    winner = match.get("winner")
    if not winner:
        return None
    if winner == "draw":
        return "The match is a draw"
    if winner in PARTIES:
        return f"The {winner} party wins the match"
    return f"{winner} wins the match"


def _total_rows(match: dict[str, Any], by_person: bool) -> list[dict[str, Any]]:
    totals: dict[str, int] = match.get("totals", {})
    goal = match.get("goal", "standard")
    rows = []
    for i, (key, value) in enumerate(totals.items()):
        cls = key if key in PARTIES and not by_person else PERSON_CLASSES[i % 4]
        rows.append({
            "key": key,
            "label": key.capitalize() if not by_person else key,
            "value": value,
            "cls": cls,
            "pct": max(0.0, min(100.0, 100.0 * value / STANDARD_GOAL)),
            "to_go": to_go(value, goal),
            "winner": match.get("winner") == key,
        })
    return rows


def _past_hands(match: dict[str, Any], keys: list[str], by_person: bool) -> list[dict[str, Any]]:
    running = dict.fromkeys(keys, 0)
    rows = []
    for n, entry in enumerate(match.get("hands", []), start=1):
        scores = entry.get("people", {}) if by_person else entry.get("score", {})
        for k in keys:
            running[k] += int(scores.get(k, 0))
        setup = entry.get("setup", {})
        names = setup.get("names", {})
        rows.append({
            "n": n,
            "scores": [scores.get(k) for k in keys],
            "totals": [running[k] for k in keys],
            "party": entry.get("score", {}),
            "dealer": seat_name(setup.get("dealer"), names) if setup.get("dealer") else "",
            "soloist": seat_name(setup.get("soloist"), names) if setup.get("soloist") else "",
        })
    return rows


def chart_series(match: dict[str, Any], by_person: bool) -> list[dict[str, Any]]:
    """Running totals per hand for the chart, starting at 0 before the first hand."""
    rows = _total_rows(match, by_person)
    keys = [r["key"] for r in rows]
    past = _past_hands(match, keys, by_person)
    return [{"label": r["label"], "cls": r["cls"],
             "values": [0] + [p["totals"][i] for p in past]} for i, r in enumerate(rows)]


def _shown_trick(hand: dict[str, Any]) -> dict[str, Any] | None:
    """The trick the table shows: the one in progress, else the last one finished."""
    tricks = hand.get("tricks") or []
    return tricks[-1] if tricks else None


def hand_view(hand: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
    """The current hand: seats around the Twilight card, the shown trick, the parties."""
    names = dict(hand.get("names") or {})
    if hand.get("new_moon") and not names.get(hand["new_moon"]):
        names[hand["new_moon"]] = "New moon"
    moon = set(hand.get("moon_seats") or ("north", "south"))
    nxt = hand.get("next")
    trick = _shown_trick(hand)
    by_seat = {p["seat"]: p["card"] for p in (trick or {}).get("plays", [])}
    leds = status.get("leds") if isinstance(status.get("leds"), dict) else {}
    seats = {}
    for seat in SEATS:
        role = ""
        if hand.get("soloist") == seat:
            role = "soloist"
        elif hand.get("new_moon") == seat:
            role = "new moon"
        if hand.get("dealer") == seat:
            role = (role + " · deals") if role else "deals"
        card = by_seat.get(seat)
        seats[seat] = {
            "seat": seat,
            "name": seat_name(seat, names) if seat != hand.get("new_moon") else seat.capitalize(),
            "named": bool(names.get(seat)),
            "cult": "moon" if seat in moon else "sun",
            "role": role,
            "on_turn": bool(nxt and nxt.get("seat") == seat),
            "card": card_view(card) if seat in by_seat else None,  # a gap: "?"
            "won": bool(trick and trick.get("winner") == seat),
            "led": bool(trick and trick.get("leader") == seat),
            "led_state": leds.get(seat) if leds else None,
        }
    parties = []
    for party in PARTIES:
        parties.append({
            "party": party,
            "souls": hand.get("souls", {}).get(party, 0),
            "multiplier": hand.get("multiplier", {}).get(party, 0),
            "shrines": [s.capitalize() for s in (hand.get("shrines") or {}).get(party, [])],
            "score": hand.get("score", {}).get(party, 0),
            "cards": len(hand.get("won", {}).get(party, [])),
        })
    tricks = []
    index = 1
    for t_no, t in enumerate(hand.get("tricks") or [], start=1):
        plays = []
        for p in t.get("plays", []):
            plays.append({"index": index, "seat": p["seat"],
                          "who": seat_name(p["seat"], names), **card_view(p["card"])})
            index += 1
        tricks.append({"n": t_no, "plays": plays, "leader": t.get("leader"),
                       "winner": seat_name(t["winner"], names) if t.get("winner") else None,
                       "lies": t.get("lies", False), "complete": len(plays) == 4})
    trick_state = ""
    if trick and len(trick.get("plays", [])) == 4:
        if trick.get("lies"):
            trick_state = "purgatory: the trick lies, nobody takes it"
        elif trick.get("winner"):
            trick_state = f"{seat_name(trick['winner'], names)} took the trick"
    next_hand = hand.get("next_hand")
    gaps = [{"index": g["index"], "seat": g["seat"], "who": seat_name(g["seat"], names),
             "trick": g["trick"], "choices": [card_view(c) for c in g["choices"]]}
            for g in hand.get("gaps") or ()]
    return {
        "set_aside": hand.get("set_aside"),
        "gaps": gaps,
        "provisional": bool(hand.get("provisional")),
        "number": hand.get("number", 1),
        "complete": bool(hand.get("complete")),
        "cards_played": len(hand.get("plays") or []),
        "trick_no": len(hand.get("tricks") or []),
        "next": nxt,
        "next_name": seat_name(nxt["seat"], names) if nxt else None,
        "dealer": seat_name(hand.get("dealer"), names) if hand.get("dealer") else None,
        "leader": seat_name(hand.get("leader"), names) if hand.get("leader") else None,
        "leader_fixed": hand.get("leader_fixed", False),
        "soloist": seat_name(hand.get("soloist"), names) if hand.get("soloist") else None,
        "new_moon": hand.get("new_moon"),
        "seats": seats,
        "trick_state": trick_state,
        "lying_tricks": hand.get("lying_tricks", 0),
        "lying": [card_view(c) for c in hand.get("lying") or []],
        "neutral": [card_view(c) for c in hand.get("neutral") or []],
        "parties": parties,
        "tricks": tricks,
        "names": hand.get("names") or {},
        "next_hand": next_hand,
        "next_hand_text": _next_hand_text(next_hand, names),
    }


def _next_hand_text(next_hand: dict[str, Any] | None, names: dict[str, Any]) -> str:
    if not next_hand:
        return ""
    new_names = next_hand.get("names") or names
    parts = []
    if next_hand.get("dealer"):
        parts.append(f"{seat_name(next_hand['dealer'], new_names)} deals")
    if next_hand.get("soloist"):
        parts.append(f"{seat_name(next_hand['soloist'], new_names)} is soloist")
    if next_hand.get("leader"):
        parts.append(f"{seat_name(next_hand['leader'], new_names)} leads")
    return ", ".join(parts)


def page_view(snap: dict[str, Any]) -> dict[str, Any]:
    """Everything the score page shows, from one snapshot."""
    match = snap["match"]
    by_person = match.get("mode") == "three" and match.get("pairing") != "fixed"
    totals = _total_rows(match, by_person)
    keys = [r["key"] for r in totals]
    status = snap.get("status") or {}
    return {
        "version": snap.get("version", 0),
        "mode": match.get("mode", "four"),
        "three": match.get("mode") == "three",
        "by_person": by_person,
        "pairing": match.get("pairing", "rotating"),
        "goal": match.get("goal", "standard"),
        "goal_text": goal_text(match.get("goal", "standard")),
        "match_no": match.get("number", 1),
        "totals": totals,
        "needs_names": by_person and not totals,
        "over": bool(match.get("over")),
        "winner": winner_text(match),
        "hand": hand_view(snap["hand"], status),
        "keys": keys,
        "labels": [r["label"] for r in totals],
        "classes": [r["cls"] for r in totals],
        "past": _past_hands(match, keys, by_person),
        "series": chart_series(match, by_person),
        "refused": snap.get("refused"),
        "mirror": bool((snap.get("settings") or {}).get("mirror")),
        "camera": status.get("camera"),
        # the game log's writes failing (a full disk, a read-only file system)
        "log_error": _log_error(status.get("log")),
    }


def _log_error(status: Any) -> str | None:
    """The log status as the page says it: None while writes succeed."""
    if not status or status == "ok":
        return None
    return str(status).removeprefix("error: ")


def card_words(card_id: str | None) -> str:
    """A card in plain words: ``"sun-souls-7"`` -> ``"the sun 7 souls"``."""
    if not card_id or card_id == "unknown card":
        return "a card not read yet"
    view = card_view(card_id)
    if view["kind"] == "unknown":
        return card_id
    return f"the {view['cult']} {view['name'].lower()}"


def plain_refusal(exc: Exception) -> str:
    """What the rules refused, in plain words for the table (no rule code, no card id
    alone): ``"Play 6 (East, the sun 7 souls): East is not on turn — West is."``"""
    import re

    reason = getattr(exc, "reason", None)
    if reason is None:
        text = re.sub(r"\s*\(R\d\)$", "", str(exc)).strip()
        return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")

    def seat(word: str) -> str:
        return word.capitalize() if word in SEATS else word

    m = re.fullmatch(r"(\w+) is not on turn, (\w+) is", reason)
    if m:
        said = f"{seat(m[1])} is not on turn — {seat(m[2])} is"
    elif m := re.fullmatch(r"(\w+) already has a card in this trick; (\w+) is on turn", reason):
        said = f"{seat(m[1])} already has a card in this trick — {seat(m[2])} is on turn"
    elif m := re.fullmatch(r"(\w+) sits at a (\w+) side and must have a (\w+) card played",
                           reason):
        said = f"{seat(m[1])} sits at a {m[2]} side: only a {m[3]} card can lie there"
    elif m := re.fullmatch(r"(\S+) was already played this hand(?: \(play (\d+)\))?", reason):
        words = card_words(m[1])
        said = f"{words[:1].upper() + words[1:]} was already played this hand"
        if m[2]:
            said += f" (play {m[2]})"
    else:
        said = reason[:1].upper() + reason[1:]
    where = seat(str(getattr(exc, "seat", "")))
    return f"Play {getattr(exc, 'index', '?')} ({where}, {card_words(getattr(exc, 'card', None))}): {said}."
