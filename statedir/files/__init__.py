"""File formats: YAML read and written, JSON Schemas compiled and checked, the parse cache, the signers file.
Imports nothing of statedir but `statedir.errors`."""
