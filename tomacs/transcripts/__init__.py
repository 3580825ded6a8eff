"""Multi-round debate transcripts: one schema for real debates from any source (docs/transcripts.md)."""
