"""Merging store files from two machines: the per-field rules, log unions, the driver git runs, doctor's merge checks.
Imports the engine and the layers below it; `statedir.sync` and `statedir.history` build on it."""
