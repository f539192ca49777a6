"""Clinical language as data: the word classes curators edit in admin, read through one selector."""

from evidence.language.words import NOT_TOPIC, WordClass, Words, current, refresh, shipped_rows, words

__all__ = ["NOT_TOPIC", "WordClass", "Words", "current", "refresh", "shipped_rows", "words"]
