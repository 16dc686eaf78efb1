import asyncio

from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types
from research import build


def run(state: dict | None = None) -> dict:
    async def go() -> dict:
        service = InMemorySessionService()
        session = await service.create_session(app_name="research", user_id="u", state=state or {})
        runner = Runner(app_name="research", node=build(), session_service=service)
        content = types.Content(role="user", parts=[types.Part(text="go")])
        async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=content):
            pass
        done = await service.get_session(app_name="research", user_id="u", session_id=session.id)
        return dict(done.state)

    return asyncio.run(go())


def test_the_workflow_writes_a_report():
    state = run()
    assert state["report"] == "['search_papers', 'search_web']" and state["sources"] in ("the web", "papers")


def test_a_strict_web_search_is_flagged():
    assert run({"strict": "web"})["flag"] == "web"


def test_strict_papers_are_flagged():
    assert run({"strict": "papers"})["flag"] == "papers"
