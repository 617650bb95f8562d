"""Request ids: unique per request, in every process (forked workers included)."""

from __future__ import annotations

import os
import re

from edge.http.requestid import new_request_id


def test_request_ids_have_the_documented_shape_and_do_not_repeat():
    ids = [new_request_id() for _ in range(20_000)]
    assert all(re.fullmatch(r"req_[0-9a-f]{24}", rid) for rid in ids)
    assert len(set(ids)) == len(ids)


def test_a_forked_child_does_not_repeat_its_parents_ids():
    # The generator is reseeded after fork: without it a worker would replay the ids of
    # its supervisor and of every other worker.
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report its next ids, then leave without pytest's teardown
        os.close(read)
        os.write(write, " ".join(new_request_id() for _ in range(50)).encode())
        os._exit(0)
    os.close(write)
    parent = {new_request_id() for _ in range(50)}
    with os.fdopen(read, "rb") as fh:
        child = set(fh.read().decode().split())
    os.waitpid(pid, 0)
    assert len(child) == 50 and not parent & child
