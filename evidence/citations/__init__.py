"""Citations in generated answers: find them (`parse`), verify and number them (`verify`), and keep
unverified identifiers out of streamed text (`stream`). The evidence they resolve against is in
`evidence.sources`."""
