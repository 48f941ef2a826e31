# ruff: noqa: E501  (a table of exact diagnostic lines, one per rule)
"""Diagnostics of jobs, schedules, sagas and ``permission:``: one case per rule.

Each case appends one declaration to a valid base schema and expects exactly one error,
at its ``file:line:col``, with the "did you mean" where a name is close to a declared one.
The case id is the rule's name.
"""

from __future__ import annotations

import pytest

from toolkit_codegen.compiler import load_sources

BASE = 'entity Note {\n  id: uuid @primary\n  owner_id: string\n}\nmessage Msg {\n  text: string\n}\nenum Tier { free, pro }\nservice S {\n  rpc Get(id: uuid) -> Note {\n    http: GET "/n/{id}"\n    auth: none\n  }\n}\njob Send(user: string, n: int32) { queue: mail }\n'

RULES = [
    pytest.param(
        "job A() { queu: x }",
        'app.toolkit:16:11: [parse] unknown job option "queu" (did you mean "queue"?); expected one of queue, retry',
        id="job_unknown_option_suggests",
    ),
    pytest.param(
        'job A() { queue: "emails" }',
        "app.toolkit:16:18: [parse] queue: takes a bare name, not a string (write queue: emails)",
        id="job_queue_is_a_bare_name",
    ),
    pytest.param(
        "job A() { queue: a  queue: b }",
        "app.toolkit:16:21: [parse] duplicate job option queue",
        id="job_duplicate_option",
    ),
    pytest.param(
        "job A() { retry: max_attempts(0) }",
        "app.toolkit:16:18: [parse] max_attempts(n) takes one integer greater than 0",
        id="retry_max_attempts_must_be_positive",
    ),
    pytest.param(
        "job A() { retry: max_attempt(3) }",
        'app.toolkit:16:18: [parse] unknown retry setting max_attempt (did you mean "max_attempts"?); expected max_attempts(n) and backoff(exponential, base: <duration>)',
        id="retry_unknown_setting_suggests",
    ),
    pytest.param(
        "job A() { retry: backoff(exponentail, base: 1s) }",
        'app.toolkit:16:26: [parse] unknown backoff kind exponentail (did you mean "exponential"?); exponential is the only kind',
        id="retry_backoff_is_exponential_only",
    ),
    pytest.param(
        "job A() { retry: backoff(exponential, base: 30) }",
        "app.toolkit:16:45: [parse] base: takes a duration, e.g. base: 30s",
        id="retry_backoff_base_is_a_duration",
    ),
    pytest.param(
        "job A(x: strng) { queue: q }",
        'app.toolkit:16:10: [resolve] unknown type strng (did you mean "string"?)',
        id="job_params_resolve_like_rpc_params",
    ),
    pytest.param(
        "job A(x: string, x: int32)",
        "app.toolkit:16:18: [resolve] duplicate parameter x in job A",
        id="job_duplicate_parameter",
    ),
    pytest.param(
        "job A(m: Msg)",
        "app.toolkit:6:3: [resolve] field Msg.text (string) needs @validate: Msg is an input of job A (validate-everything-in)",
        id="job_message_param_needs_validate",
    ),
    pytest.param(
        "job Import() { queue: q }",
        'app.toolkit:16:1: [resolve] job Import becomes the Python function "import", a keyword; choose another name',
        id="job_function_name_is_not_a_keyword",
    ),
    pytest.param(
        "job A(from: string)",
        'app.toolkit:16:7: [resolve] parameter "from" of job A is a Python keyword; rename it',
        id="job_parameter_is_not_a_keyword",
    ),
    pytest.param(
        "job A(_check: string)",
        'app.toolkit:16:7: [resolve] parameter "_check" of job A is a name the generated dispatcher uses; rename it',
        id="job_parameter_does_not_shadow_the_dispatcher",
    ),
    pytest.param(
        "job SEND()",
        'app.toolkit:16:1: [resolve] job SEND and job Send both become the Python function "send"; rename one',
        id="job_function_names_are_unique",
    ),
    pytest.param(
        "job Note()",
        "app.toolkit:16:1: [resolve] duplicate declaration Note (first declared at app.toolkit:1:1)",
        id="job_name_is_global",
    ),
    pytest.param(
        'schedule D { crn: "@daily"  dispatch: Send("a", 1) }',
        'app.toolkit:16:14: [parse] unknown schedule option "crn" (did you mean "cron"?); expected one of cron, dispatch',
        id="schedule_unknown_option_suggests",
    ),
    pytest.param(
        'schedule D { dispatch: Send("a", 1) }',
        'app.toolkit:16:1: [resolve] schedule D needs cron: "<spec>", e.g. cron: "0 8 * * *"',
        id="schedule_cron_is_required",
    ),
    pytest.param(
        'schedule D { cron: "61 * * * *"  dispatch: Send("a", 1) }',
        "app.toolkit:16:20: [resolve] invalid cron in schedule D: minute: 61 is out of range 0-59",
        id="schedule_cron_out_of_range",
    ),
    pytest.param(
        'schedule D { cron: "0 0 30 2 *"  dispatch: Send("a", 1) }',
        'app.toolkit:16:20: [resolve] invalid cron in schedule D: "0 0 30 2 *" never matches a date (no chosen month has that day)',
        id="schedule_cron_never_matches",
    ),
    pytest.param(
        'schedule D { cron: "0 0 8 * * *"  dispatch: Send("a", 1) }',
        "app.toolkit:16:20: [resolve] invalid cron in schedule D: six-field cron (with seconds) is not supported; the scheduler has one-minute resolution: use five fields (minute hour day-of-month month day-of-week)",
        id="schedule_cron_six_fields",
    ),
    pytest.param(
        'schedule D { cron: "@dialy"  dispatch: Send("a", 1) }',
        'app.toolkit:16:20: [resolve] invalid cron in schedule D: unknown cron alias @dialy (did you mean "@daily"?)',
        id="schedule_cron_unknown_alias_suggests",
    ),
    pytest.param(
        'schedule D { cron: "@daily" }',
        "app.toolkit:16:1: [resolve] schedule D needs dispatch: <Job>(args)",
        id="schedule_dispatch_is_required",
    ),
    pytest.param(
        'schedule D { cron: "@daily"  dispatch: Sned("a", 1) }',
        'app.toolkit:16:40: [resolve] schedule D dispatches unknown job Sned (did you mean "Send"?)',
        id="schedule_dispatch_unknown_job_suggests",
    ),
    pytest.param(
        'schedule D { cron: "@daily"  dispatch: Note() }',
        "app.toolkit:16:40: [resolve] schedule D dispatches Note, which is an entity, not a job",
        id="schedule_dispatch_must_name_a_job",
    ),
    pytest.param(
        'schedule D { cron: "@daily"  dispatch: Send("a") }',
        "app.toolkit:16:40: [resolve] schedule D: job Send takes 2 arguments, dispatch passes 1",
        id="schedule_dispatch_argument_count",
    ),
    pytest.param(
        'schedule D { cron: "@daily"  dispatch: Send(f("a"), 1) }',
        "app.toolkit:16:45: [parse] nested call f(...) in a dispatch argument; arguments are literals",
        id="schedule_dispatch_nested_call",
    ),
    pytest.param(
        'schedule D { cron: "@daily"  dispatch: Send }',
        "app.toolkit:16:40: [parse] dispatch: calls a job: write Send(...)",
        id="schedule_dispatch_is_a_call",
    ),
    pytest.param(
        'schedule D { cron: "@daily"  dispatch: Send("a", "b") }',
        'app.toolkit:16:50: [resolve] schedule D: argument "b" does not fit n: expected an integer',
        id="schedule_dispatch_argument_type",
    ),
    pytest.param(
        'schedule D { cron: "@daily"  dispatch: Send(a, 1) }',
        'app.toolkit:16:45: [resolve] schedule D: argument a is a bare name but user is string; quote a string ("a"), bare names are enum values',
        id="schedule_dispatch_bare_name_for_a_string",
    ),
    pytest.param(
        'job T(t: Tier)\nschedule D { cron: "@daily"  dispatch: T(pri) }',
        'app.toolkit:17:42: [resolve] schedule D: pri is not a value of enum Tier (parameter t) (did you mean "pro"?)',
        id="schedule_dispatch_enum_value_suggests",
    ),
    pytest.param(
        "saga O { }",
        "app.toolkit:16:1: [resolve] saga O has no steps",
        id="saga_needs_steps",
    ),
    pytest.param(
        "saga O { step a { compensate: S.Get } }",
        "app.toolkit:16:10: [resolve] step a of saga O needs execute: Service.Rpc",
        id="saga_step_execute_is_required",
    ),
    pytest.param(
        "saga O {\n  step a { execute: S.Get  pivot: true }\n  step b { execute: S.Get  pivot: true }\n}",
        "app.toolkit:18:3: [resolve] saga O has more than one pivot step (a and b); at most one step is the point of no return",
        id="saga_at_most_one_pivot",
    ),
    pytest.param(
        "saga O {\n  step a { execute: S.Get }\n  step a { execute: S.Get }\n}",
        "app.toolkit:18:3: [resolve] duplicate step a in saga O (first declared at app.toolkit:17:3)",
        id="saga_step_names_are_unique",
    ),
    pytest.param(
        "saga O { step a { execute: Ss.Get } }",
        'app.toolkit:16:28: [resolve] unknown service Ss (did you mean "S"?) (saga O)',
        id="saga_unknown_service_suggests",
    ),
    pytest.param(
        "saga O { step a { execute: S.Gte } }",
        'app.toolkit:16:28: [resolve] service S has no rpc Gte (did you mean "Get"?) (saga O)',
        id="saga_unknown_rpc_suggests",
    ),
    pytest.param(
        "saga O { step a { exec: S.Get } }",
        'app.toolkit:16:19: [parse] unknown step option "exec" (did you mean "execute"?); expected one of execute, compensate, pivot',
        id="saga_step_unknown_option_suggests",
    ),
    pytest.param(
        "saga O { step a { execute: Get } }",
        "app.toolkit:16:28: [parse] execute: names an rpc as Service.Rpc",
        id="saga_step_execute_names_service_rpc",
    ),
    pytest.param(
        "saga O { step a { execute: S.Get  pivot: yes } }",
        "app.toolkit:16:42: [parse] pivot: takes true or false",
        id="saga_step_pivot_is_a_boolean",
    ),
    pytest.param(
        'service P { rpc A(id: uuid) -> Note { http: GET "/p/{id}"  permission: check("a", resource: Msg) } }',
        "app.toolkit:16:93: [resolve] permission resource Msg of rpc P.A must be an entity, not a message",
        id="permission_resource_must_be_an_entity",
    ),
    pytest.param(
        'service P { rpc A(id: uuid) -> Note { http: GET "/p/{id}"  permission: check("a", resource: Nte) } }',
        'app.toolkit:16:93: [resolve] unknown permission resource Nte (did you mean "Note"?)',
        id="permission_unknown_resource_suggests",
    ),
    pytest.param(
        'service P { rpc A(id: uuid) -> Note { http: GET "/p/{id}"  permission: check("a", resource: Note, owner_field: owner) } }',
        'app.toolkit:16:112: [resolve] owner_field owner is not a field of entity Note (did you mean "owner_id"?)',
        id="permission_owner_field_must_be_a_field",
    ),
    pytest.param(
        'service P { rpc A(id: uuid) -> Note { http: GET "/p/{id}"  permission: check("a", owner_field: owner_id) } }',
        "app.toolkit:16:96: [parse] owner_field needs resource: name the entity that holds the field",
        id="permission_owner_field_needs_resource",
    ),
    pytest.param(
        'service P { rpc A(id: uuid) -> Note { http: GET "/p/{id}"  permission: check("a", resourse: Note) } }',
        'app.toolkit:16:83: [parse] unknown check argument resourse (did you mean "resource"?); expected resource, owner_field',
        id="permission_unknown_argument_suggests",
    ),
    pytest.param(
        'service P { rpc A(id: uuid) -> Note { http: GET "/p/{id}"  permission: check(resource: Note) } }',
        'app.toolkit:16:72: [parse] check(...) needs an action string first: check("note.edit")',
        id="permission_action_comes_first",
    ),
    pytest.param(
        'service P { rpc A(id: uuid) -> Note { http: GET "/p/{id}"  permission: chek("a") } }',
        'app.toolkit:16:72: [parse] invalid permission chek (did you mean "check"?); expected check("action", resource: Entity, owner_field: field) or none',
        id="permission_value_suggests_check",
    ),
    pytest.param(
        'service P { rpc A(id: uuid) -> Note { http: GET "/p/{id}" } }',
        "app.toolkit:16:13: [resolve] rpc P.A requires auth (secure-by-default); write `auth: none` for a public route, `auth: required`, or a `permission:`",
        id="secure_by_default_without_auth_or_permission",
    ),
]


def errors(extra: str) -> list[str]:
    """Return the error lines of the base schema plus ``extra``."""
    result = load_sources({"app.toolkit": BASE + extra + "\n"})
    return [str(d) for d in result.diagnostics if d.severity == "error"]


def test_the_base_schema_is_valid() -> None:
    assert errors("") == []


@pytest.mark.parametrize(("source", "expected"), RULES)
def test_rule(source: str, expected: str) -> None:
    assert errors(source) == [expected]
