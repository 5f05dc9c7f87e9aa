"""The dashboard's views, one blueprint per module."""
