"""The question-path benchmark counts what it says: files the question passes, and returns to a file left."""

from benchmarks.question_path import measured, path_of


def test_consecutive_calls_in_one_file_are_one_stay_and_coming_back_is_a_return() -> None:
    calls = [
        ("chat/pipeline/run.py", "answer_events"),
        ("chat/pipeline/understand.py", "understand"),
        ("chat/pipeline/understand.py", "search_text"),
        ("evidence/lexicon.py", "hits"),
        ("chat/pipeline/understand.py", "understand"),
        ("evidence/lexicon.py", "spelled_out"),
    ]
    stays = path_of(calls)
    assert [stay["file"] for stay in stays] == [
        "chat/pipeline/run.py",
        "chat/pipeline/understand.py",
        "evidence/lexicon.py",
        "chat/pipeline/understand.py",
        "evidence/lexicon.py",
    ]
    assert stays[1]["functions"] == ["understand", "search_text"]
    assert measured(stays) == {"distinct_files": 3, "returns": 2, "stays": 5}
