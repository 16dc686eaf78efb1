"""Haystack's hybrid retrieval shape as its tutorials write it: the keyword and embedding retrievers' documents
joined by a DocumentJoiner, which keeps both lists and orders them by score. Hazard-free: the fan-in the
BranchJoiner version gets wrong (hs_hybrid_retrieval_branch_joiner.py)."""

from haystack import Document, Pipeline, component
from haystack.components.joiners import DocumentJoiner


@component
class Retriever:
    """A stand-in for InMemoryBM25Retriever / InMemoryEmbeddingRetriever: documents for a query."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    @component.output_types(documents=list[Document])
    def run(self, query: str) -> dict:
        return {"documents": [Document(content=f"{self.kind}: {query}", score=0.5)]}


pipeline = Pipeline()
pipeline.add_component("bm25", Retriever("keyword"))
pipeline.add_component("embedding", Retriever("dense"))
pipeline.add_component("joiner", DocumentJoiner())
pipeline.connect("bm25.documents", "joiner.documents")
pipeline.connect("embedding.documents", "joiner.documents")
