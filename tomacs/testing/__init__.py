"""Test doubles shipped with the package, so tests, benchmark scripts and users share them."""
