"""Warnings emitted when a ParallelAgent or a SequentialAgent is built, per version."""

import warnings

from adk_kit import Step

from google.adk.agents import ParallelAgent, SequentialAgent

from fanin.probe import Claim, Observer, probe


@probe(
    "adk/deprecation/parallel-agent",
    title="Warnings emitted when building a ParallelAgent and a SequentialAgent (category, text, attributed to)",
    claim=Claim(
        "ParallelAgent and SequentialAgent are deprecated in favour of Workflow (ADK 2.x) and warn when "
        "they are instantiated.",
        "https://github.com/google/adk-python/blob/main/src/google/adk/agents/parallel_agent.py",
        expect={
            "value.ParallelAgent[0].category": "DeprecationWarning",
            "value.SequentialAgent[0].category": "DeprecationWarning",
        },
    ),
)
async def test_parallel_agent(obs: Observer) -> None:
    emitted = {}
    for cls in (ParallelAgent, SequentialAgent):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with obs.framework():
                cls(name="shell", sub_agents=[Step(name="a"), Step(name="b")])
        emitted[cls.__name__] = [
            {
                "category": w.category.__name__,
                "message": str(w.message),
                # Python shows a DeprecationWarning by default only when it is attributed to the caller's code.
                "attributed_to": "caller" if w.filename == __file__ else "adk" if "google/adk" in w.filename else "other",
            }
            for w in caught
        ]
    deprecated = [name for name, ws in emitted.items() if any(w["category"] == "DeprecationWarning" for w in ws)]
    obs.record(
        emitted,
        label=f"deprecated: {', '.join(n.removesuffix('Agent') for n in deprecated)}" if deprecated else "no warning",
        detail="; ".join(
            f"{name}: " + (", ".join(f"{w['category']} ({w['attributed_to']}) {w['message']!r}" for w in ws) or "none")
            for name, ws in emitted.items()
        ),
        hazard="safe",
    )
