# SPDX-License-Identifier: MIT
"""What a page may send to the board: request words within the line protocol's rules, and numbers
a board's float holds. Anything else is refused here, with an error in the protocol's own form
(`error WORD message`), and nothing is sent.
"""

import json
import re

from armfw.console import MAX_LINE
from armfw.protocol import Refused as BoardRefused, number as board_number

# A request word: what the protocol's numbers, names and key=value options are made of.
_WORD = re.compile(r"[A-Za-z0-9_.+\-=,]{1,40}\Z")
# The largest number a board's float (32 bits) holds.
FLOAT32_MAX = 3.4028234663852886e38
# Commands that would break the link's reading of replies if a page sent them.
RESERVED = {"echo": "echo would interleave prompts with the replies the link reads",
            "sync": "sync is the link's own resynchronisation"}


class PageRefused(Exception):
    """A page's request that was not sent; str() is its final line, `error WORD message`."""

    def __init__(self, word, message):
        super().__init__("error %s %s" % (word, message))
        self.word = word


def check_words(words):
    """Refuse (PageRefused) words that cannot be sent as one request line."""
    if not words:
        raise PageRefused("BAD_COMMAND", "empty request")
    for w in words:
        if not isinstance(w, str) or not _WORD.match(w):
            raise PageRefused("BAD_INPUT", "not sent: %r is not a request word (letters, digits, . + - = , "
                                       "up to 40)" % (w if isinstance(w, str) else str(w)[:40]))
    reserved = RESERVED.get(words[0].lower())
    if reserved:
        raise PageRefused("BAD_COMMAND", "not sent from the page: " + reserved)
    length = len(" ".join(words))
    if length > MAX_LINE:
        raise PageRefused("BAD_COMMAND", "not sent: a line of %d bytes, the board takes at most %d" % (length, MAX_LINE))


def number(value):
    """The number a word (by the firmware's own rule) or a page's JSON number gives, if a board's
    float holds it; else None."""
    try:
        v = board_number(value) if isinstance(value, str) else float(value)
    except (BoardRefused, OverflowError):
        return None
    return v if abs(v) <= FLOAT32_MAX else None


def json_text(value, limit=20):
    """A page's value as a refusal quotes it: its JSON text, cut to limit characters."""
    return json.dumps(value, default=str)[:limit]
