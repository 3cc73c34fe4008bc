"""The kit replicas are built from: tables, serving, and the website pages (web/)."""
