"""Test doubles shipped with docintent for users' own tests (see also :mod:`docintent.brains.scripted`)."""
