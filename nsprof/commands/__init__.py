"""Thin Typer commands over the library; registered on the app in nsprof/cli.py."""
