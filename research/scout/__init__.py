"""Evidence Scout: a drug x disease evidence search run as a job (page, API, `manage.py scout`).

`runs.py` validates input, records runs and queues them; `pipeline.py` runs the stages (normalise,
expand, fetch and cache, semantic search, rerank, synthesize) with progress and resume;
`result.py` shapes the one result document the page, the API and the command all show.
"""
