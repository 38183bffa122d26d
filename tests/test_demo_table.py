"""The demo's simulated players keep the log in step with the simulator's truth."""

from __future__ import annotations

from companion.demo_table import DemoTable
from companion.gamelog import GameLog
from vision.movie import HandMovie


class MovieTruth:
    """What the demo camera (vision.movie.SimulatedTable) exposes: truth and frame."""

    def __init__(self, movie: HandMovie) -> None:
        self.truth_events = movie.events
        self.frame_index = -1


def test_players_lay_what_the_camera_missed_and_fix_misreads(tmp_path) -> None:
    movie = HandMovie(7, 0, (640, 360), 10.0, hands=2, render=False)
    table = MovieTruth(movie)
    log = GameLog.open(tmp_path)
    # the camera reports the Twilight card's moon sides before the first card
    log.setup(moon_seats=[s.value for s in movie.moon_seats])
    fixer = DemoTable(log, table)
    corrected = False
    for frame in movie.frames():
        table.frame_index = frame.index
        fixer.step()
        snap = log.snapshot()
        plays = snap["hand"]["plays"]
        if not corrected and len(plays) == 5 and not snap["hand"]["complete"]:
            # a misread: the camera took play 5 for another card of the same cult
            cult = plays[4]["card"].split("-")[0]
            others = [c for c in log.correction_choices(5) if c != plays[4]["card"]]
            log.correct(5, others[0], source="camera")
            corrected = cult in others[0]
    for _ in range(5):
        table.frame_index += 100
        fixer.step()
    truth = [(e["seat"], e["card"]) for e in movie.events if e["type"] == "play"]
    scores = [e["score"] for e in movie.events if e["type"] == "hand"]
    snap = log.snapshot()
    assert [h["score"] for h in snap["match"]["hands"]] == scores
    assert snap["hand"]["complete"] and len(truth) == 56
    assert corrected and fixer.fixes == 56 + 1
    sources = {e["data"].get("source") for e in log.events() if e["type"] in ("play", "correct")}
    assert sources == {"table", "camera"}
    log.close()
