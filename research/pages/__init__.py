"""Context builders and item loaders of the research pages, named in research.registries."""
