"""The Twilight table companion: the game core (:mod:`companion.core`), and directly
in this package the wiring (:mod:`companion.app`) and the commands
(:mod:`companion.cli`).

R1–R9 in comments and messages are the sections of docs/rules.md; C1–C9 those of
docs/interfaces.md.
"""
