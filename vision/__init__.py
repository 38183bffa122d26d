"""Recognition: camera sources, locating the Twilight card, reading the cards at its
sides, tracking the table over time; the built-in deck's art. The table simulator
is :mod:`vision.sim`.

R1–R9 are the sections of docs/rules.md; C1–C9 those of docs/interfaces.md.
"""
