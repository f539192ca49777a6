"""The curated evidence library, tag vocabulary and the citation/reference machinery."""
