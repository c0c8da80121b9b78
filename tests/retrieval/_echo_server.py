"""A two-worker echo server run as ``python -c ECHO_SERVER_SCRIPT PORT``, for the worker-process tests.

Why a subprocess: the supervisor forks workers and handles signals, which a
test must not do inside the pytest process.
"""

ECHO_SERVER_SCRIPT = """
import sys
from agentenv.retrieval.base import Hit
from agentenv.retrieval.server import serve

class Echo:
    def search(self, q, k):
        return [Hit(q, float(i), i) for i in range(k)]

    def search_batch(self, queries, k):
        return [self.search(q, k) for q in queries]

serve(Echo(), {"corpus": "echo"}, "127.0.0.1", int(sys.argv[1]), workers=2)
"""
