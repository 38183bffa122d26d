"""Seat LEDs and buttons through gpiozero (docs/wiring.md).

R1–R9 are the sections of docs/rules.md; C1–C9 those of docs/interfaces.md.
"""
