"""The research workbench: Tablizer and TrialScout pages, their chat tray, AI columns, snapshots and compare."""
