"""Retrieval systems that write standard TREC runs for any registered dataset."""
