"""The chat tray of the research pages (Tablizer, TrialScout): context, replies, suggestions, AI columns."""
