"""Credibility scoring (shared/papers/credibility-scoring.txt): trust in agents learned across queries.

TodyComm learns *within* a query, across rounds; credibility scoring learns *across* the stream of
queries a system answers. Both can run together: `decision=crs` works with any method.
"""
