"""ClinicalTrials.gov API v2 client, trial cache and the TrialScout page."""
