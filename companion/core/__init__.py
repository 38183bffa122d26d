"""The game core: cards, rules, match, records, the deal, the game and its log.

Standard library only. Everything with side effects beyond the game log (camera,
LEDs, web page, commands) lives outside this package and imports it, never the
reverse.
"""
