"""A hybrid retrieval pipeline in the shape of Haystack's tutorials, with one change real code makes: the
keyword and the embedding retrievers' documents are joined by a BranchJoiner instead of a DocumentJoiner.
Both retrievers run in every run, so the joiner keeps one list and drops the other with no error from 2.7.0
(haystack/branch-joiner/two-live-branches); up to 2.6.1 it raised ValueError.
"""

from haystack import Document, Pipeline, component
from haystack.components.joiners import BranchJoiner


@component
class Retriever:
    """A stand-in for InMemoryBM25Retriever / InMemoryEmbeddingRetriever: documents for a query."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    @component.output_types(documents=list[Document])
    def run(self, query: str) -> dict:
        return {"documents": [Document(content=f"{self.kind}: {query}")]}


@component
class Answer:
    @component.output_types(answer=str)
    def run(self, documents: list[Document]) -> dict:
        return {"answer": " | ".join(d.content or "" for d in documents)}


pipeline = Pipeline()
pipeline.add_component("bm25", Retriever("keyword"))
pipeline.add_component("embedding", Retriever("dense"))
pipeline.add_component("joiner", BranchJoiner(list[Document]))
pipeline.add_component("answer", Answer())
pipeline.connect("bm25.documents", "joiner.value")
pipeline.connect("embedding.documents", "joiner.value")
pipeline.connect("joiner.value", "answer.documents")
