"""The game core: cards, rules, match, records, the deal, the game and its log.

Standard library only. Everything with side effects beyond the game log (camera,
LEDs, web page, commands) lives outside this package and imports it, never the
reverse.

The rules sections cited as R1–R9 are docs/rules.md; the interfaces (commands,
records, events) cited as C1–C9 are docs/interfaces.md.
"""
