"""Real code: the sdists of requests, click and httpx, fetched from PyPI into a cache.

Each assertion was checked by hand against the source of that release.
"""

from __future__ import annotations

import pytest

from vitalrag.eval.corpora import fetch
from vitalrag.graph.memory import MemoryStore
from vitalrag.ingest import index_repository

pytestmark = pytest.mark.network


@pytest.fixture(scope="module")
def requests_graph(tmp_path_factory):
    corpus = fetch("pypi:requests==2.32.3")
    store = MemoryStore(tmp_path_factory.mktemp("requests") / "idx")
    report = index_repository(corpus.path, store, name="requests", content="code")  # the code graph
    return store, report


@pytest.fixture(scope="module")
def click_graph(tmp_path_factory):
    corpus = fetch("pypi:click==8.1.7")
    store = MemoryStore(tmp_path_factory.mktemp("click") / "idx")
    report = index_repository(corpus.path, store, name="click")
    return store, report


def _has(store, source, target, kind):
    return any(e.target == target for e in store.find_edges(source=source, kind=kind))


RQ = "requests:src/requests/"


@pytest.mark.parametrize("source,target,kind", [
    ("api.py:request", "sessions.py:Session.request", "CALLS"),       # with sessions.Session() as session
    ("api.py:request", "sessions.py:Session", "CALLS"),               # module-alias constructor
    ("api.py:get", "api.py:request", "CALLS"),
    ("sessions.py:Session.request", "sessions.py:Session.prepare_request", "CALLS"),
    ("sessions.py:Session.request", "sessions.py:Session.send", "CALLS"),
    ("sessions.py:Session.request", "models.py:Request", "CALLS"),    # from .models import Request
    ("adapters.py:HTTPAdapter.send", "adapters.py:HTTPAdapter.build_response", "CALLS"),
    ("adapters.py:HTTPAdapter.build_response", "models.py:Response", "CALLS"),
    ("auth.py:_basic_auth_str", "_internal_utils.py:to_native_string", "CALLS"),
    ("models.py:PreparedRequest.prepare", "models.py:PreparedRequest.prepare_body", "CALLS"),
    ("adapters.py:HTTPAdapter", "adapters.py:BaseAdapter", "INHERITS"),
    ("auth.py:HTTPProxyAuth", "auth.py:HTTPBasicAuth", "INHERITS"),
    ("models.py:PreparedRequest", "models.py:RequestHooksMixin", "INHERITS"),
    ("__init__.py", "sessions.py:Session", "IMPORTS"),                # re-export in __init__
])
def test_requests_edges(requests_graph, source, target, kind):
    store, _ = requests_graph
    assert _has(store, RQ + source, RQ + target, kind)


# Every call these methods make, checked line by line against the 2.32.3 source:
# a call on an untyped value (``adapter.send``, ``send_kwargs.update``) has no edge,
# though requests defines some of those names once (``RequestsCookieJar.update``).
REQUESTS_CALLS = {
    "sessions.py:Session.request": {
        "models.py:Request", "sessions.py:Session.prepare_request",
        "sessions.py:Session.merge_environment_settings", "sessions.py:Session.send"},
    "sessions.py:Session.send": {
        "utils.py:resolve_proxies", "sessions.py:Session.get_adapter", "hooks.py:dispatch_hook",
        "cookies.py:extract_cookies_to_jar", "sessions.py:SessionRedirectMixin.resolve_redirects"},
    "adapters.py:HTTPAdapter.send": {
        "adapters.py:HTTPAdapter.get_connection_with_tls_context", "adapters.py:HTTPAdapter.cert_verify",
        "adapters.py:HTTPAdapter.request_url", "adapters.py:HTTPAdapter.add_headers",
        "adapters.py:HTTPAdapter.build_response", "exceptions.py:InvalidURL", "exceptions.py:ConnectionError",
        "exceptions.py:ConnectTimeout", "exceptions.py:RetryError", "exceptions.py:ProxyError",
        "exceptions.py:SSLError", "exceptions.py:ReadTimeout", "exceptions.py:InvalidHeader"},
}


@pytest.mark.parametrize("source", sorted(REQUESTS_CALLS))
def test_requests_calls_exact(requests_graph, source):
    store, _ = requests_graph
    got = {e.target for e in store.find_edges(source=RQ + source, kind="CALLS")}
    assert got == {RQ + t for t in REQUESTS_CALLS[source]}


def test_requests_objects(requests_graph):
    store, report = requests_graph
    objs = store.get_objects([RQ + "sessions.py:Session.request", RQ + "models.py:Response", RQ[:-1] + "/"])
    req = objs[RQ + "sessions.py:Session.request"]
    assert req.kind == "method" and req.start_line == 500 and req.end_line == 591
    assert req.signature.startswith("def request(self, method, url, params=None")
    assert req.docstring.startswith("Constructs a :class:`Request <Request>`, prepares it and sends it.")
    assert objs[RQ + "models.py:Response"].kind == "class"
    assert objs["requests:src/requests/"].kind == "module"
    assert report.files == 34 and not report.skipped
    # tests are linked to what they exercise
    assert _has(store, "requests:tests/test_hooks.py:test_default_hooks", RQ + "hooks.py:default_hooks", "TESTS")


CK = "click:src/click/"


@pytest.mark.parametrize("source,target,kind", [
    ("testing.py:CliRunner.invoke", "core.py:BaseCommand.main", "CALLS"),   # cli.main via annotation
    ("testing.py:CliRunner.invoke", "testing.py:CliRunner.isolation", "CALLS"),
    ("core.py:BaseCommand.main", "core.py:BaseCommand.make_context", "CALLS"),
    ("core.py:BaseCommand.main", "utils.py:echo", "CALLS"),
    ("core.py:Command.parse_args", "core.py:Context.fail", "CALLS"),        # ctx: Context parameter
    ("core.py:MultiCommand.resolve_command", "parser.py:split_opt", "CALLS"),
    ("termui.py:confirm", "exceptions.py:Abort", "CALLS"),
    ("decorators.py:command", "decorators.py:command.decorator", "CALLS"),  # nested function
    ("core.py:Option", "core.py:Parameter", "INHERITS"),
    ("core.py:Group", "core.py:MultiCommand", "INHERITS"),
    ("types.py:Choice", "types.py:ParamType", "INHERITS"),
    ("exceptions.py:UsageError", "exceptions.py:ClickException", "INHERITS"),
    ("__init__.py", "core.py:Group", "IMPORTS"),
])
def test_click_edges(click_graph, source, target, kind):
    store, _ = click_graph
    assert _has(store, CK + source, CK + target, kind)


def test_click_overloads_yield_to_implementation(click_graph):
    store, _ = click_graph
    ids = {o.id for o in store.find_objects(path="src/click/decorators.py", kind="function")}
    assert {CK + "decorators.py:command", CK + "decorators.py:command#overload1"} <= ids
    assert _has(store, "click:tests/test_basic.py:test_basic_functionality",
                CK + "decorators.py:command", "TESTS")


@pytest.fixture(scope="module")
def httpx_graph(tmp_path_factory):
    corpus = fetch("pypi:httpx==0.28.1")
    store = MemoryStore(tmp_path_factory.mktemp("httpx") / "idx")
    index_repository(corpus.path, store, name="httpx")
    return store


HX = "httpx:httpx/"

# The sync client's send path: every call to httpx code these four methods make,
# read off the 0.28.1 source (generator methods, hooks and logging are outside
# it). ``response`` is typed by ``-> Response`` of the method that returned it,
# ``transport`` by ``_transport_for_url(...) -> BaseTransport``, ``self.cookies``
# by the property's ``-> Cookies``.
HTTPX_SEND_PATH = {
    "_client.py:Client.send": {
        "_client.py:BaseClient._set_timeout", "_client.py:BaseClient._build_request_auth",
        "_client.py:Client._send_handling_auth", "_models.py:Response.read", "_models.py:Response.close"},
    "_client.py:Client._send_handling_auth": {
        "_auth.py:Auth.sync_auth_flow", "_client.py:Client._send_handling_redirects",
        "_models.py:Response.read", "_models.py:Response.close"},
    "_client.py:Client._send_handling_redirects": {
        "_exceptions.py:TooManyRedirects", "_client.py:Client._send_single_request",
        "_client.py:BaseClient._build_redirect_request", "_models.py:Response.read", "_models.py:Response.close"},
    "_client.py:Client._send_single_request": {
        "_client.py:Client._transport_for_url", "_exceptions.py:request_context",
        "_transports/base.py:BaseTransport.handle_request", "_client.py:BoundSyncStream",
        "_models.py:Cookies.extract_cookies"},
}


@pytest.mark.parametrize("source", sorted(HTTPX_SEND_PATH))
def test_httpx_send_path_calls_exact(httpx_graph, source):
    got = {e.target for e in httpx_graph.find_edges(source=HX + source, kind="CALLS")}
    assert got == {HX + t for t in HTTPX_SEND_PATH[source]}
