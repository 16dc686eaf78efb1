"""The report: what it says (build) and how it is formatted (html, markdown, checklist). Imports model."""
