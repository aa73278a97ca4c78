import os

# Never reach a model hub: every model skillbank loads ships inside a package.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

from skillbank import SkillBank  # noqa: E402

# Property tests have no per-example deadline (hypothesis' default is 200 ms): on a loaded 2-core
# machine a slow example is not a failure. Speed is for the benchmarks.
settings.register_profile("skillbank", deadline=None)
settings.load_profile("skillbank")


# -- what CI must run ------------------------------------------------------------------------------


def in_ci() -> bool:
    """Whether these tests run in CI: ``CI`` set to anything but empty, ``0`` or ``false``. CI
    installs every extra, so there a missing part is a broken install step, not a reason to skip."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false")


def unavailable(reason: str, *, allow_module_level: bool = False) -> None:
    """Skip for ``reason`` (what is missing and how to install it); under CI, fail instead: the
    one rule for PostgreSQL, BFCL, τ²-bench and the local model."""
    if in_ci():
        pytest.fail(f"CI must run this test, but {reason}: .ci/run installs it", pytrace=False)
    pytest.skip(reason, allow_module_level=allow_module_level)


def pytest_runtest_logreport(report):
    """With ``SKILLBANK_SKIP_LOG`` set, append every skipped test (or module, skipped whole at
    collection) as ``node id<TAB>reason`` to that file: .ci/run checks the list against
    .ci/allowed-skips.txt."""
    target = os.environ.get("SKILLBANK_SKIP_LOG")
    if not target or not report.skipped or getattr(report, "wasxfail", None) is not None:
        return
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    reason = reason.removeprefix("Skipped: ").replace("\t", " ").replace("\n", " ")
    with open(target, "a", encoding="utf-8") as log:
        log.write(f"{report.nodeid}\t{reason}\n")


pytest_collectreport = pytest_runtest_logreport


@pytest.fixture
def cli_env(monkeypatch):
    """The CLI as tests run it: the model-free embedder, a wide terminal, no bank from the env."""
    monkeypatch.setenv("SKILLBANK_EMBEDDER", "hash")
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.delenv("SKILLBANK_DIR", raising=False)


@pytest.fixture
def bank(tmp_path):
    """A real bank (SQLite file + Chroma directory) with the deterministic hash embedder."""
    b = SkillBank.open(tmp_path / "bank", embedder="hash")
    yield b
    b.close()


def add_sample_skills(bank):
    """A few distinct skills used across tests."""
    return [
        bank.add_skill(
            name="decline-missing-tool",
            description="When a needed tool is not available, such as the window tool",
            body="Do the possible part, decline the rest and name the missing tool.",
            kind="guard", tools=["open_window"], tags=["car"],
        ),
        bank.add_skill(
            name="check-battery-first",
            description="Before starting climate control, check the battery level",
            body="Always call `get_battery` before `start_climate`.",
            kind="policy", tools=["get_battery", "start_climate"], tags=["car"],
        ),
        bank.add_skill(
            name="refund-after-eligibility",
            description="Refund an order only after checking refund eligibility",
            body="Look up the order, check eligibility, then refund.",
            kind="procedure", tools=["lookup_order", "check_eligibility", "refund"], tags=["retail"],
        ),
    ]


def teaches(obj, kind, **fields):
    """Whether a skill (or its content) holds a lesson of ``kind`` with ``fields``; ``tools``
    matches a procedure's tool order (immediate repeats collapsed)."""
    content = getattr(obj, "content", obj)
    for lesson in content.lessons:
        if lesson.kind.value != kind:
            continue
        rest = dict(fields)
        if "tools" in rest:
            order = []
            for step in lesson.steps:
                if not order or order[-1] != step.tool:
                    order.append(step.tool)
            if tuple(order) != tuple(rest.pop("tools")):
                continue
        if all(getattr(lesson, k) == v for k, v in rest.items()):
            return True
    return False


# Lessons in a line, for the tests that hand skills to the simulated policy.
def _lesson(kind, **fields):
    from skillbank.lessons import Lesson, LessonKind

    return Lesson(kind=LessonKind(kind), **fields)


def order(*tools):
    from skillbank.lessons import MethodStep

    return _lesson("procedure", steps=tuple(MethodStep(tool=t) for t in tools))


def check_first(check=None, tool=None):
    return _lesson("check_first", check=check, tool=tool)


def missing_tool(tool=None):
    return _lesson("missing_tool", tool=tool)


def missing_parameter(tool=None, parameter=None):
    return _lesson("missing_parameter", tool=tool, parameter=parameter)


def ask_for(parameter=None, tool=None):
    return _lesson("ask_for", parameter=parameter, tool=tool)


def unknown_field(tool=None, field=None):
    return _lesson("unknown_field", tool=tool, field=field)


def budget(calls):
    return _lesson("budget", budget=calls)


# -- PostgreSQL: a real server per session (see postgres_support.py) -----------------------------

_SERVERS: dict = {}


def _server(kind: str, request):
    """The session's server of ``kind``, started on first use; skipped locally when this machine
    cannot start one, but a failure in CI (see :func:`unavailable`), where both must run."""
    from postgres_support import LocalPostgres, ServerUnavailable

    if kind not in _SERVERS:
        try:
            import psycopg  # noqa: F401
            import psycopg_pool  # noqa: F401

            server = LocalPostgres(kind).start()
        except (ServerUnavailable, ImportError) as exc:
            _SERVERS[kind] = exc
        else:
            _SERVERS[kind] = server
            request.session.config.add_cleanup(server.stop)
    server = _SERVERS[kind]
    if isinstance(server, Exception):
        unavailable(f"no {kind} PostgreSQL server here: {server}")
    return server


@pytest.fixture(scope="session")
def pg_server(request):
    """A PostgreSQL server with pgvector."""
    return _server("pgvector", request)


@pytest.fixture(scope="session")
def pg_plain_server(request):
    """A PostgreSQL server without pgvector (the exact-search fallback)."""
    return _server("plain", request)


@pytest.fixture
def pg_url(pg_server):
    """A new empty database on the pgvector server."""
    return pg_server.create_database()


BACKENDS = ["sqlite", "postgres", "postgres-exact"]


@pytest.fixture(params=BACKENDS)
def backend_target(request, tmp_path):
    """Where a bank goes, per backend: a folder, a pgvector database, a database without pgvector."""
    if request.param == "sqlite":
        return tmp_path / "bank"
    server = _server("pgvector" if request.param == "postgres" else "plain", request)
    return server.create_database()


@pytest.fixture
def any_bank(backend_target):
    """The conformance suite's bank: the same tests run on every backend."""
    b = SkillBank.open(backend_target, embedder="hash")
    yield b
    b.close()
