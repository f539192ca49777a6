"""Rule-based tray replies without a language model: request words, PubMed queries, trial searches, intent."""
