"""`nsprof explain TOPIC`: teaching texts (topics) joined with what nsprof can compute about the
ladder's own access patterns (bank and sector models) and measure in a profile (evidence)."""
