"""Multi-round debate transcripts: one schema for real debates from any source (docs/transcripts.md).

from tomacs.transcripts import load_debates
debates = load_debates(["runs/my_run", "shared/data/debates/mad-follower"])
"""

from tomacs.transcripts.formats import detect_format, known_formats, load_debates, transcript_format
from tomacs.transcripts.jsonl import debate_from_dict, debate_to_dict, read_debates, write_debates
from tomacs.transcripts.schema import SCHEMA, AgentInfo, Debate, TranscriptError, Turn, check_debate

__all__ = [
    "SCHEMA",
    "AgentInfo",
    "Debate",
    "TranscriptError",
    "Turn",
    "check_debate",
    "debate_from_dict",
    "debate_to_dict",
    "detect_format",
    "known_formats",
    "load_debates",
    "read_debates",
    "transcript_format",
    "write_debates",
]
