"""Ingest: fetch, parse, store and embed feed items."""
