"""Plain BM25 baselines for dev/bench/relevance.ts (run inside the venv that script makes).

Reads {"docs": [{"id", "text"}], "queries": [{"id", "text"}], "k": 10} as JSON on stdin and
prints {"<system>": {"<query id>": ["<doc id>", ...]}} for each baseline:
  bm25s        bm25s defaults (Lucene BM25, k1=1.5, b=0.75), English stop words, no stemming
  bm25s+stem   the same with the Snowball English stemmer (PyStemmer)
  rank_bm25    rank-bm25's BM25Okapi on lower-cased whitespace tokens (its README's usage)
"""
import json
import re
import sys

import bm25s
import Stemmer
from rank_bm25 import BM25Okapi

data = json.load(sys.stdin)
docs, queries, k = data["docs"], data["queries"], data["k"]
doc_ids = [d["id"] for d in docs]
texts = [d["text"] for d in docs]
out = {}


def run_bm25s(stemmer):
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False)
    q_tokens = bm25s.tokenize([q["text"] for q in queries], stopwords="en", stemmer=stemmer, show_progress=False)
    results, _scores = retriever.retrieve(q_tokens, k=k, show_progress=False)
    return {q["id"]: [doc_ids[i] for i in results[n]] for n, q in enumerate(queries)}


out["bm25s"] = run_bm25s(None)
out["bm25s+stem"] = run_bm25s(Stemmer.Stemmer("english"))

tok = lambda s: re.findall(r"\w+", s.lower())
okapi = BM25Okapi([tok(t) for t in texts])
runs = {}
for q in queries:
    scores = okapi.get_scores(tok(q["text"]))
    top = sorted(range(len(scores)), key=lambda i: -scores[i])[:k]
    runs[q["id"]] = [doc_ids[i] for i in top]
out["rank_bm25"] = runs

json.dump(out, sys.stdout)
