"""The lesson's own facts and demonstrations, shared by checks, commands and dashboard."""
