"""The app's own test stub: every LlmAgent answers one fixed line, so the tests need no network or key."""

from collections.abc import AsyncGenerator
from typing import Any

import pipeline
import pytest
from google.adk.models import BaseLlm, LlmResponse
from google.genai import types


class CannedModel(BaseLlm):
    model: str = "canned"

    async def generate_content_async(self, llm_request: Any, stream: bool = False) -> AsyncGenerator[Any, None]:
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text="canned answer")]))


@pytest.fixture(autouse=True)
def canned_models(monkeypatch: pytest.MonkeyPatch) -> None:
    for agent in (pipeline.researcher_web, pipeline.researcher_papers, pipeline.synthesiser, pipeline.reviewer):
        monkeypatch.setattr(agent, "model", CannedModel())
