"""Conversations, LLM providers, the tool-use loop and the streamed chat pages."""
