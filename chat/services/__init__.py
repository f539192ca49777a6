"""Chat services: understanding, retrieval, the extractive composer, the answer pipeline, conversations."""
