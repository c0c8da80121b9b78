"""simulator-check: the scripted simulators are truthful and leak-free; bad ones are caught."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from agentenv.cli.simulator_check import main
from agentenv.multiagent.base import DialogueEnv
from agentenv.multiagent.simulator_check import simulator_check

from ._helpers import LeakyPatient, LeakyUser, LyingPatient, lying_user, oversharing_user


def test_scripted_patient_is_truthful_and_leak_free(dx: DialogueEnv) -> None:
    report = simulator_check(dx, dialogues=60)
    print("\n" + report.format())
    assert report.claims > 500 and report.messages >= 50
    assert report.truthfulness == 1.0 and report.leakage == 0.0 and report.leak_dialogues == 0
    assert (
        report.answered == 1.0
        and report.volunteered == report.evasions == report.contradictions == 0
    )


def test_scripted_user_is_truthful_and_leak_free(media: DialogueEnv) -> None:
    report = simulator_check(media, dialogues=len(media.tasks))
    print("\n" + report.format())
    assert report.claims > 1000 and report.truthfulness == 1.0 and report.leakage == 0.0
    assert report.answered == 1.0 and report.volunteered == 0 and report.invalid == 0


def test_lying_patient_is_caught(dx: DialogueEnv) -> None:
    report = simulator_check(dx, policy=LyingPatient(dx.kb), dialogues=10)
    assert report.truthfulness is not None and report.truthfulness < 0.5 and report.leakage == 0.0


def test_patient_naming_the_diagnosis_is_caught(dx: DialogueEnv) -> None:
    report = simulator_check(dx, policy=LeakyPatient(dx.kb), dialogues=10)
    # A name that is also a phenotype name ("Microcephaly") is not counted: it cannot be told from a symptom.
    assert report.leak_dialogues >= 6 and report.leakage > 0.5


def test_user_naming_the_title_is_caught(media: DialogueEnv) -> None:
    report = simulator_check(media, policy=LeakyUser(), dialogues=20)
    assert (
        report.leak_dialogues >= 18
    )  # titles made only of stop-words ("Me Myself I") are not checkable


def test_user_lying_or_oversharing_is_caught(media: DialogueEnv) -> None:
    lying = simulator_check(media, policy=lying_user, dialogues=20)
    assert lying.truthfulness is not None and lying.truthfulness < 0.9
    oversharing = simulator_check(media, policy=oversharing_user, dialogues=20)
    assert oversharing.truthfulness == 1.0 and oversharing.volunteered >= 20


def test_unreadable_replies_are_counted(dx: DialogueEnv) -> None:
    report = simulator_check(dx, policy=lambda obs, info: "Yes", dialogues=3)
    assert report.invalid == report.messages > 0 and report.answered == 0.0


def test_cli_scripted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report.json"
    assert main(["--env", "MediaConcierge-v0", "--dialogues", "5", "--json", str(out)]) == 0
    assert "truthfulness             1.000" in capsys.readouterr().out
    data = json.loads(out.read_text())
    assert data["side"] == "user" and data["truthfulness"] == 1.0 and data["leakage"] == 0.0


def test_cli_rejects_bad_arguments() -> None:
    with pytest.raises(SystemExit, match="simulates the 'patient' side"):
        main(["--env", "DiagnosisDialogue-v0", "--side", "doctor", "--dialogues", "1"])
    with pytest.raises(SystemExit, match="--policy llm only"):
        main(["--env", "DiagnosisDialogue-v0", "--agent-args", "model=x", "--dialogues", "1"])


@pytest.fixture
def fake_llm() -> Iterator[str]:
    """An OpenAI-compatible endpoint on 127.0.0.1 whose model always says the same plain sentence."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            self.rfile.read(int(self.headers["Content-Length"]))
            body = json.dumps(
                {"choices": [{"message": {"role": "assistant", "content": "I'm not sure."}}]}
            )
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_cli_llm_policy(fake_llm: str, capsys: pytest.CaptureFixture[str]) -> None:
    """An LLM patient in plain text is wrapped into <say> by default; with --strict-format it is unreadable."""
    args = [
        "--env",
        "DiagnosisDialogue-v0",
        "--policy",
        "llm",
        "--dialogues",
        "2",
        "--agent-args",
        f"base_url={fake_llm}",
        "model=fake",
    ]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "patient (llm)" in out and "unreadable messages      0" in out and "evasions" in out
    assert main([*args, "--strict-format"]) == 0
    assert "unreadable messages      0" not in capsys.readouterr().out


def test_cli_llm_policy_against_a_dead_endpoint(capsys: pytest.CaptureFixture[str]) -> None:
    """A dead endpoint is one line naming it (exit 2), not a traceback; the library raises AgentFailure."""
    import socket

    from agentenv.evaluation.agents import AgentFailure, make_agent

    with socket.socket() as sock:  # a port that nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    args = [
        "--env",
        "DiagnosisDialogue-v0",
        "--policy",
        "llm",
        "--dialogues",
        "2",
        "--agent-args",
        f"base_url={url}",
        "model=fake",
        "retries=0",
    ]
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith(
        "agentenv: error: simulator-check: the llm policy on the patient side failed in "
        f"dialogue 1 of 2: {url}/v1/chat/completions: 1 attempt(s) failed"
    ), err
    assert "check that the server is up" in err
    from agentenv.multiagent.registry import make

    with pytest.raises(AgentFailure, match=f"dialogue 1 of 1: {url}/v1/chat/completions"):
        simulator_check(
            make("DiagnosisDialogue-v0"),
            policy=make_agent("llm", base_url=url, model="x", retries="0"),
            dialogues=1,
            policy_name="llm",
        )
