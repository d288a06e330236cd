"""Adjudication activity (ARS #673): the five-row bindings, `bind`, post-terminal `seal`, export."""
