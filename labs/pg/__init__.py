"""Postgres for the kit: what the catalog says, throwaway clusters, and scratch databases."""
