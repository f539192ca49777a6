"""The research workbench: Tablizer, TrialScout and Evidence Scout pages, chat tray, AI columns, snapshots."""
