"""Context builders and item loaders of the research pages, registered in `research.research_pages`."""
