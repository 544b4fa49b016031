"""The operation registry: name -> parameter model, pure function, pipeline rank.

An operation is a pure function of a data frame: it receives the episode's table (which it
must not mutate), its validated parameters and a small read-only context, and returns a new
table plus a message, or raises a typed error. The episode commits only on success.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict, ValidationError

from dataclean_env.errors import InvalidParameters, UnknownOperation, describe
from dataclean_env.schemas import QueryResult
from dataclean_env.table.deferred import Table, frame_of
from dataclean_env.table.snapshot import Snapshot
from dataclean_env.table.values import Kind

# The claim task kinds' operations (detection, standardisation, audit; operations/claims.py):
# only their kinds allow them, and they never run inside a program.
CLAIM_OPERATIONS = frozenset(
    {"report_errors", "standardise", "audit", "identify", "fix", "validate"}
)


class Params(BaseModel):
    """Base of every parameter model: unknown keys and loose types are refused."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class NoParams(Params):
    pass


@dataclass(frozen=True)
class OpContext:
    """What an operation may know: the task's public target schema (never gold values) and,
    when the caller has one, the snapshot of the table it is applied to."""

    target_schema: Mapping[str, Kind] = field(default_factory=dict)
    snapshot: Snapshot | None = None
    # Key columns the task protects: operations must not change their values.
    protected_columns: frozenset[str] = frozenset()
    # The task's operations (None: any); `program` checks its steps against them.
    allowed_operations: frozenset[str] | None = None
    # The operations accepted so far in the episode, in order (phased tasks check them).
    history: tuple[str, ...] = ()
    # time.monotonic() by which the whole step must be done (None: no limit); operations
    # whose cost the client controls (regex_replace, program) check it.
    deadline: float | None = None
    # The characters of text the table may hold after the step (None: not known here);
    # `sql` measures its result against it before the rows leave DuckDB.
    max_text_chars: int | None = None
    # Labelled variants only: key values -> their clean rows (the grader's `clean_rows`).
    clean_rows: Callable[[list[Any]], dict[str, dict[str, str] | None]] | None = None

    def snapshot_of(self, table: Table) -> Snapshot:
        return self.snapshot if self.snapshot is not None else Snapshot.of(frame_of(table))


@dataclass(frozen=True)
class OpResult:
    # The new table (the input itself when nothing changed); a lazy operation may return it
    # deferred (`dataclean_env.table.deferred`): `table` builds it when first asked for.
    output: Table
    message: str
    # The snapshot of `table`, when the operation can derive it cheaply from the input's.
    snapshot: Snapshot | None = None
    # (first row, row count) that observations' sample rows should show from now on.
    window: tuple[int, int] | None = None
    # What a `query` found: the step's observation carries it (None for other operations).
    query_result: QueryResult | None = None

    @property
    def table(self) -> pd.DataFrame:
        return frame_of(self.output)


# The table is a DataFrame, or for a `lazy` operation the episode's table as it is (a
# `deferred.Table`, maybe unbuilt): so the first parameter is typed per operation.
OpFunction = Callable[[Any, Any, OpContext], OpResult]


@dataclass(frozen=True)
class Operation:
    name: str
    params_model: type[Params]
    apply: OpFunction
    # Position in the canonical pipeline; going back to a lower rank is "out of order".
    rank: int
    description: str
    ends_episode: bool = False
    # Repeating it right away is legitimate (one fill per column), so it is not penalised.
    repeatable: bool = False
    # Its time depends on what the client sends (a pattern, a program), not only on the
    # table's size: servers run it off the event loop (bounded by the step's deadline).
    slow: bool = False
    # It reads its input only through `ctx.snapshot` and may return its table deferred, so
    # the episode hands it the committed table unbuilt (see `dataclean_env.table.deferred`).
    lazy: bool = False


@dataclass(frozen=True)
class Alias:
    target: str
    fixed_params: Mapping[str, Any]


_OPERATIONS: dict[str, Operation] = {}
_ALIASES: dict[str, Alias] = {}


def operation(
    name: str,
    params: type[Params],
    *,
    rank: int,
    description: str,
    ends_episode: bool = False,
    repeatable: bool = False,
    slow: bool = False,
    lazy: bool = False,
) -> Callable[[OpFunction], OpFunction]:
    """Decorator that registers `fn` as the operation `name`."""

    def register(fn: OpFunction) -> OpFunction:
        if name in _OPERATIONS or name in _ALIASES:
            raise ValueError(f"operation {name!r} registered twice")
        _OPERATIONS[name] = Operation(
            name, params, fn, rank, description, ends_episode, repeatable, slow, lazy
        )
        return fn

    return register


def alias(name: str, target: str, **fixed_params: Any) -> None:
    """`name` means `target` with `fixed_params` (e.g. fill_missing_mean)."""
    if name in _OPERATIONS or name in _ALIASES:
        raise ValueError(f"operation {name!r} registered twice")
    _ALIASES[name] = Alias(target, fixed_params)


def operation_names() -> list[str]:
    return sorted(_OPERATIONS)


def alias_names() -> list[str]:
    return sorted(_ALIASES)


def with_aliases(names: Sequence[str]) -> list[str]:
    """`names` followed by the aliases of those operations it does not already hold (what
    a prompt or the compact schema names as also accepted)."""
    return [*names, *(a for a in alias_names() if a not in names and canonical_name(a) in names)]


def get_operation(name: str) -> Operation:
    try:
        return _OPERATIONS[name]
    except KeyError:
        raise UnknownOperation(_unknown_message(name)) from None


def canonical_name(name: str) -> str:
    """The registered operation a name or alias stands for."""
    if name in _ALIASES:
        return _ALIASES[name].target
    get_operation(name)
    return name


def resolve(name: str, parameters: Mapping[str, Any] | None) -> tuple[Operation, Params]:
    """The operation and validated parameters for a (possibly aliased) action."""
    params = dict(parameters or {})
    if name in _ALIASES:
        entry = _ALIASES[name]
        for key, value in entry.fixed_params.items():
            if key in params and params[key] != value:
                raise InvalidParameters(
                    f"{name!r} implies {key}={value!r}, but the parameters say {params[key]!r}"
                )
            params[key] = value
        name = entry.target
    op = get_operation(name)
    try:
        return op, op.params_model.model_validate(params)
    except ValidationError as exc:
        raise InvalidParameters(
            f"invalid parameters for {name!r}: {describe(exc, 'parameters')}"
        ) from None


def _unknown_message(name: str) -> str:
    known = ", ".join(operation_names() + alias_names())
    return f"unknown operation {name!r}; known operations: {known}"
