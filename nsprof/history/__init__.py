"""Performance history across commits (`nsprof history`): what each bench record or capture
measured, kept in an embedded SQLite database (store), summarized from records and captures
(summary), and judged for trends and regressions under the statistics `nsprof diff` uses (trend)."""
