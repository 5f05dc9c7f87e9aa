"""One module per python -m labs command."""
