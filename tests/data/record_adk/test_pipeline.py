import asyncio

from google.adk.runners import InMemoryRunner
from google.genai import types
from pipeline import root_agent


def run(message: str, state: dict | None = None) -> dict:
    async def go() -> dict:
        runner = InMemoryRunner(agent=root_agent, app_name="research")
        session = await runner.session_service.create_session(app_name="research", user_id="u", state=state or {})
        content = types.Content(role="user", parts=[types.Part(text=message)])
        async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=content):
            pass
        done = await runner.session_service.get_session(app_name="research", user_id="u", session_id=session.id)
        return dict(done.state)

    return asyncio.run(go())


def test_the_pipeline_writes_a_report():
    state = run("fan-in")
    assert state["report"] == "canned answer" and "looked here" in state["sources"]


def test_a_strict_web_search_is_flagged():
    assert run("joins", {"strict": "researcher_web"})["flag"] == "researcher_web"


def test_strict_papers_are_flagged():
    assert run("joins", {"strict": "researcher_papers"})["flag"] == "researcher_papers"
