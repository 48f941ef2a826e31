"""A run's claim made by the pop of its step job (the ``db`` queue on PostgreSQL, issue 27).

Why: a step on the ``db`` queue cost three round trips (the job's pop, the run's claim,
the record) and two of them only took leases. :class:`PopClaim` is the run's claim as a
write joined to the queue's pop (:meth:`~toolkit_batteries.queue.adapters.db.DBQueue.join_claim`):
the pop's statement reads the popped body, and when it is a step job of this service's
instance for a run that is free at that position, leases the run to a fresh owner and
returns the run's row with the message. :meth:`DBWorkflow._claim
<toolkit_batteries.workflow.adapters.db.DBWorkflow._claim>` then takes that row instead
of claiming again. A step is two round trips: the pop, and the record that acks it.

What it claims is exactly what ``_claim`` with a position would: same namespace, a
claimable status, due, no live lease, at the position the job was queued for, locked
rows skipped (``FOR NO KEY UPDATE``, as the claim). Anything else (a body it does not
recognise, a run not free, a workflow this process has not run a step of yet) claims
nothing, and the step claims as before.

The body is matched, not parsed, and by plain string functions (a regular expression
with captures cost PostgreSQL 0.07 to 0.6 ms a body): its text (``encode(body,
'escape')``, which any bytes make) must start with the exact prefix
:func:`~toolkit_batteries.queue.jobs.payload.encode` writes for a step job of this
instance, and the rest, split at its double quotes, must be the canonical rest of such a
job for this run (its id, workflow, position and whether it compensates). Nothing is
cast, so no body can make the pop's statement fail; a body that is not byte for byte a
step job of a run free at that position claims nothing. A workflow name JSON escapes is
left to the ordinary claim. The lease of each workflow comes from its definition, passed
as a JSON object of the definitions this service has run on the topic (``learn``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

from toolkit_batteries.queue.jobs.payload import encode

from ..base import ADVANCE_JOB
from ..records import CLAIMABLE, RunStatus

__all__ = ["PopClaim", "step_job_prefix"]

#: The run id's placeholder in the sample body :func:`step_job_prefix` cuts.
_RUN = "RUN-SLOT"


def step_job_prefix(instance: str) -> str | None:
    """Return the text a step job of ``instance`` starts with, up to its run id.

    Cut from the encoder's own output, so it is the layout pushed. ``None`` for an
    instance name JSON would escape (its jobs take the ordinary claim).
    """
    if json.dumps(instance) != f'"{instance}"':
        return None
    sample = encode(ADVANCE_JOB, [instance, _RUN, "", "", 0, False]).decode()
    return sample[: sample.index(_RUN)]


class PopClaim:
    """The claim of the run a popped step job names (a :class:`JoinedClaim`)."""

    def __init__(self, runs: str, columns: str, namespace: str, prefix: str) -> None:
        self._runs = runs
        self._columns = columns
        self._namespace = namespace
        self._prefix = prefix
        #: Workflow name -> its lease in seconds, and the same as JSON (the parameter).
        self._leases: dict[str, float] = {}
        self._leases_json = "{}"

    def learn(self, workflow: str, lease: float) -> None:
        """Claim runs of ``workflow`` too, leasing them for ``lease`` seconds."""
        if self._leases.get(workflow) != lease:
            leases = {**self._leases, workflow: float(lease)}
            self._leases_json = json.dumps(leases)
            self._leases = leases

    def sql(self, source: str) -> str:
        """Return the claim: ``_claim``'s with a position, its values read from ``source``.

        After the prefix a step job reads ``RUN","TOKEN","WORKFLOW",N,BOOL],"kwargs":{}}``:
        split at ``"``, eight parts, the second and fourth ``,``, the sixth ``,N,BOOL],``.
        """
        runs = self._runs
        claimable = ", ".join(f"'{status}'" for status in CLAIMABLE)
        compensating = f"(r.status = '{RunStatus.COMPENSATING}')::text"
        # The run is looked up by its primary key alone (``id = (SELECT ...)``, an index
        # condition whatever the planner thinks of the parts), as ``_claim`` does.
        return (
            "WITH j AS MATERIALIZED (SELECT string_to_array(substr(encode(body, 'escape'), "
            f"%s), '\"') AS part FROM {source} WHERE left(encode(body, 'escape'), %s) = %s) "
            f"UPDATE {runs} SET lease_owner = %s, lease_until = %s + c.lease, "
            f"attempt = {runs}.attempt + 1, status = CASE WHEN {runs}.status = "
            f"'{RunStatus.PENDING}' THEN '{RunStatus.RUNNING}' ELSE {runs}.status END, "
            "updated_at = %s "
            "FROM (SELECT r.id, (%s::jsonb ->> r.workflow)::float8 AS lease "
            f"FROM {runs} AS r, j WHERE r.id = (SELECT part[1] FROM j) "
            "AND cardinality(j.part) = 8 AND j.part[2] = ',' AND j.part[4] = ',' "
            "AND j.part[7] = 'kwargs' AND j.part[8] = ':{}}' "
            f"AND j.part[6] = ',' || r.current || ',' || {compensating} || '],' "
            "AND r.workflow = j.part[5] AND %s::jsonb ? r.workflow AND r.namespace = %s "
            f"AND r.status IN ({claimable}) AND r.run_after <= %s "
            "AND (r.lease_owner = '' OR r.lease_until <= %s) "
            f"FOR NO KEY UPDATE OF r SKIP LOCKED) AS c WHERE {runs}.id = c.id "
            f"RETURNING {self._columns}"
        )

    def params(self, now: float) -> Sequence[Any]:
        """Return the parameters for a pop at ``now`` (a new lease owner each time)."""
        owner = os.urandom(16).hex()  # as Workflow._advance draws one
        prefix = self._prefix
        size = len(prefix)
        leases, namespace = self._leases_json, self._namespace
        return (size + 1, size, prefix, owner, now, now, leases, leases, namespace, now, now)
