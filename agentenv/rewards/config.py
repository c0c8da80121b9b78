"""Reward configuration: named components in, one scalar out.

Every env reports all of its components in ``info["reward_components"]``
whatever their weight (:mod:`agentenv.rewards.components` says what each name means),
so a run logs what it did not optimise. A :class:`RewardConfig` turns them
into the scalar reward. It is rule-based and deterministic, and it fails
loudly: a weight or a cost on a component the env did not report raises
``KeyError``, it never counts as 0 (a silent 0 looks like a weak model).

Why costs are fields of their own: with accuracy and format alone, the number
of tool calls never falls under RL; tool calls, turns, modelled latency and
tokens must be something the reward can charge for. Why over-limit answers
are zeroed by default: a model rewarded for "the gold is among my 3
predictions" learns to list more than 3; truncating its list silently would
hide that.

Presets:

* ``strict`` (default): accuracy only; an answer with more predictions than
  the task allows scores 0 (never silently truncated).
* ``lenient``: the hackable "gold anywhere in my list" reward, kept for
  teaching; over-limit answers are allowed and scored on ``hit@any``.
* ``efficient``: strict plus a cost per tool call and per turn (capped), so
  that the number of tool calls can fall under RL.

A family adds presets that read its own components in its record
(``Family.reward_presets``): MediaSearch's ``first-call-credit`` is strict
plus 0.2 when the first tool call is the gold plan's first call (its
``first_call`` component), partial credit so that GRPO groups of a weak
model differ in reward; a training signal, not a score to report. A name is
looked up here first, then in the registered families.

Shaping: ``shaping=True`` moves each increase of the capped cost to the step
that caused it (:meth:`RewardConfig.step_reward`), so a wasted tool call is
felt at once; an episode's return is exactly the same. A step loop applies it
by calling ``step_reward`` on every step; ``ToolEnv`` pays at the end today,
so wrap it in :class:`agentenv.wrappers.CostShaping` for per-step costs.

Example:
    >>> cfg = resolve_reward("efficient")
    >>> cfg.combine({"accuracy": 1.0, "tool_calls": 2, "turns": 3, "over_limit": 0.0})
    0.84
    >>> resolve_reward("strict").combine({"accuracy": 1.0, "over_limit": 1.0})
    0.0
    >>> resolve_reward({"preset": "efficient", "latency_cost": 0.001}).name
    'efficient+custom'
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    Strict,
    ValidationError,
    field_validator,
    model_validator,
)

from agentenv.errors import UserInputError
from agentenv.rewards.components import closest
from agentenv.rewards.files import explain, read_reward_file

_COST_FIELDS = (
    ("tool_call_cost", "tool_calls"),
    ("turn_cost", "turns"),
    ("latency_cost", "latency_ms"),
    ("token_cost", "tokens"),
)


def _round10(value: float) -> float:
    """``round(value, 10)``, which costs about half a microsecond, skipped for whole numbers
    (most rewards: 0.0 and 1.0), which it leaves unchanged."""
    return value if value.is_integer() else round(value, 10)


_Number = Annotated[float, Strict()]
"""A number as a reward file writes one: an int or a float, never ``"0.1"`` or ``true``, which
pydantic's lax mode turns into 0.1 and 1.0 (a quoted number is a mistake to point out, not to
guess at)."""


def _rate(description: str) -> Any:
    return Field(0.0, ge=0.0, allow_inf_nan=False, strict=True, description=description)


class RewardConfig(BaseModel):
    """How components become the scalar reward. Validated; unknown fields are errors.

    ``reward = sum(weight * component) - min(cost, cost_cap)``, where ``cost``
    charges ``tool_calls``, ``turns``, ``latency_ms`` and ``tokens`` at their
    rates. An answer with ``over_limit > 0`` has its weighted part replaced
    according to ``over_limit``; the costs stay, so going over the limit is
    never cheaper than a wrong answer.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field("custom", strict=True, description="Preset name, for logs.")
    weights: dict[str, _Number] = Field(
        default_factory=lambda: {"accuracy": 1.0},
        description="Component name -> weight; a weight of 0 means 'log only'.",
    )
    tool_call_cost: float = _rate("Subtracted per tool call (component 'tool_calls').")
    turn_cost: float = _rate("Subtracted per turn, invalid actions included (component 'turns').")
    latency_cost: float = _rate("Subtracted per modelled millisecond (component 'latency_ms').")
    token_cost: float = _rate("Subtracted per generated token (component 'tokens', when known).")
    cost_cap: float | None = Field(
        None,
        ge=0.0,
        allow_inf_nan=False,
        strict=True,
        description="Upper bound on the total cost of an episode.",
    )
    over_limit: Literal["zero", "penalty", "allow"] = Field(
        "zero", description="Answers with more predictions than allowed: 0, a penalty, or allowed."
    )
    over_limit_penalty: float = Field(
        1.0,
        ge=0.0,
        allow_inf_nan=False,
        strict=True,
        description="Subtracted when over_limit='penalty'.",
    )
    require_think: bool = Field(
        False, strict=True, description="The format component requires <think> every turn."
    )
    shaping: bool = Field(
        False,
        strict=True,  # true or false, not "yes" (pydantic's lax mode reads "yes" and "off")
        description="Pay costs on the step that incurs them instead of at the end (see step_reward); "
        "the return is unchanged.",
    )

    @field_validator("weights")
    @classmethod
    def _weights_are_named_and_finite(cls, weights: dict[str, float]) -> dict[str, float]:
        if not weights:
            raise ValueError("no weights: give at least one component, e.g. {'accuracy': 1.0}")
        for key, value in weights.items():
            if not key.strip():
                raise ValueError("a weight has an empty component name")
            if value != value or value in (float("inf"), float("-inf")):
                raise ValueError(f"weight of {key!r} must be finite, got {value}")
        return weights

    @model_validator(mode="after")
    def _penalty_needs_penalty_mode(self) -> RewardConfig:
        if self.over_limit != "penalty" and self.over_limit_penalty != 1.0:
            raise ValueError(
                f"over_limit_penalty={self.over_limit_penalty} has no effect with "
                f"over_limit={self.over_limit!r}; set over_limit='penalty' or drop over_limit_penalty"
            )
        return self

    _plan: tuple[tuple[tuple[str, str, float], ...], tuple[tuple[str, float], ...]] = PrivateAttr(
        default=((), ())
    )
    """The charged costs ``(field, component, rate)`` and the weights that are not 0, worked out
    once: every episode end reads them, and a step's whole budget is a few microseconds."""

    def model_post_init(self, context: Any) -> None:
        charged = tuple(
            (f, key, getattr(self, f)) for f, key in _COST_FIELDS if getattr(self, f) != 0.0
        )
        weighted = tuple((key, w) for key, w in self.weights.items() if w != 0.0)
        self.__pydantic_private__["_plan"] = (charged, weighted)

    def model_copy(
        self, *, update: Mapping[str, Any] | None = None, deep: bool = False
    ) -> RewardConfig:
        """A copy; with ``update``, a validated one (pydantic's own skips validation, and would keep
        the worked-out plan of the original)."""
        if not update:
            return super().model_copy(deep=deep)
        return type(self).model_validate({**self.model_dump(), **update})

    # ------------------------------------------------------------------ scoring
    def required_components(self) -> frozenset[str]:
        """The components :meth:`combine` reads: those weighted (not 0), ``hit@any`` when
        ``over_limit='allow'`` may score on it (an env that reports ``over_limit``), and those
        charged at a non-zero rate.

        An env can check them when it is made (:class:`~agentenv.core.ToolEnv` does, for a family
        that declares its components), so a reward for another family fails at once, not at the
        first episode's end.

        Example:
            >>> sorted(resolve_reward("efficient").required_components())
            ['accuracy', 'tool_calls', 'turns']
        """
        charged, weighted = self.__pydantic_private__["_plan"]
        keys = {key for key, _ in weighted} | {key for _, key, _ in charged}
        if self.over_limit == "allow" and "accuracy" in keys:
            keys.add("hit@any")
        return frozenset(keys)

    def cost(self, components: Mapping[str, float], *, running: bool = False) -> float:
        """Tool-call, turn, latency and token cost, capped by ``cost_cap``.

        A charged component that is missing raises ``KeyError``, unless
        ``running`` (mid-episode counts, where a missing count is 0 so far).
        """
        total = 0.0
        for field, key, rate in self.__pydantic_private__["_plan"][0]:
            if key not in components:
                if running:
                    continue
                raise MissingComponent(
                    f"{field}={rate} charges the {key!r} component, but the env reported only "
                    f"{sorted(components)}; set {field}=0 or use an env that reports {key!r}"
                )
            total += rate * float(components[key])
        return min(total, self.cost_cap) if self.cost_cap is not None else total

    def score(self, components: Mapping[str, float]) -> float:
        """The weighted part of the reward, with the over-limit treatment, before costs."""
        over = components.get("over_limit", 0.0) > 0
        allow = over and self.over_limit == "allow"
        base = 0.0
        for key, weight in self.__pydantic_private__["_plan"][1]:
            if key == "accuracy" and allow:
                key = "hit@any"  # the lenient reward: gold anywhere in the list
            if key not in components:
                raise MissingComponent(self._missing(key, components, allow))
            base += weight * float(components[key])
        if over and self.over_limit == "zero":
            return 0.0
        if over and self.over_limit == "penalty":
            return base - self.over_limit_penalty
        return base

    def combine(self, components: Mapping[str, float]) -> float:
        """The scalar reward of a finished episode: ``score - cost``.

        Raises ``KeyError`` naming a weighted or charged component that is missing.
        """
        charged, weighted = self.__pydantic_private__["_plan"]
        if "over_limit" in components and components["over_limit"] > 0:
            return _round10(self.score(components) - self.cost(components))
        # The usual end, in one pass: :meth:`score` and :meth:`cost` inlined, the same sums in the
        # same order (so the same floats); a missing component takes their path, which names it.
        # Without a charged cost the cost is 0.0, and ``x - 0.0`` is ``x`` for every float: skipped.
        try:
            reward = 0.0
            for key, weight in weighted:
                reward += weight * float(components[key])
            if charged:
                total = 0.0
                for _, key, rate in charged:
                    total += rate * float(components[key])
                cap = self.cost_cap
                reward -= min(total, cap) if cap is not None else total
        except KeyError:
            return _round10(self.score(components) - self.cost(components))
        return reward if reward.is_integer() else round(reward, 10)  # _round10, inlined

    def step_reward(
        self,
        paid: float,
        counts: Mapping[str, float],
        components: Mapping[str, float] | None = None,
    ) -> tuple[float, float]:
        """One step's reward and the cost paid so far, for a step loop that supports shaping.

        ``counts`` are the running ``tool_calls``, ``turns`` and ``latency_ms``;
        ``components`` is given on the last step only. Without ``shaping`` a
        step earns 0 and the last step earns :meth:`combine`. With ``shaping``
        each step pays the increase of the (capped) cost since the last step,
        and the last step earns ``combine + paid``: the same return, with the
        cost of a wasted tool call felt on the step that made it.

        Example:
            >>> cfg = RewardConfig(tool_call_cost=0.1, shaping=True)
            >>> r1, paid = cfg.step_reward(0.0, {"tool_calls": 2, "turns": 1})
            >>> r2, _ = cfg.step_reward(paid, {}, {"accuracy": 1.0, "tool_calls": 2, "turns": 2})
            >>> r1, r2, round(r1 + r2, 10)
            (-0.2, 1.0, 0.8)
        """
        if components is not None:
            total = self.combine(components)
            return (_round10(total + paid) if self.shaping else total), paid
        if not self.shaping:
            return 0.0, paid
        owed = max(self.cost(counts, running=True) - paid, 0.0)
        return (round(-owed, 10) if owed else 0.0), paid + owed

    def _missing(self, key: str, components: Mapping[str, float], allow: bool) -> str:
        if allow and key == "hit@any":
            why = "over_limit='allow' scores an over-limit answer on 'hit@any'"
        else:
            why = f"reward weight on {key!r}"
        hint = closest(key, components)
        return f"{why} but the env reported only {sorted(components)}" + (
            f"; did you mean {hint!r}?" if hint else ""
        )


def check_reported_components(config: RewardConfig, reported: frozenset[str], env: str) -> None:
    """Refuse, when an env is made, a reward that reads a component the env never reports.

    Why: otherwise the reward fails with a ``KeyError`` at the end of the first episode, after
    the work. ``tokens`` is left to :class:`~agentenv.tokens.TokenEnv`, which reports it.

    Example:
        >>> check_reported_components(resolve_reward("efficient"), frozenset({"accuracy"}), "E")
        Traceback (most recent call last):
        ...
        ValueError: reward 'efficient' reads ['tool_calls', 'turns'], which E does not report (it reports ['accuracy']): choose a reward for this env, or give those components weight 0
    """
    missing = set(config.required_components() - reported - {"tokens"})
    if "over_limit" not in reported:  # no answer can be over a limit: hit@any is never read
        missing.discard("hit@any")
    if missing:
        raise ValueError(
            f"reward {config.name!r} reads {sorted(missing)}, which {env} does not report (it "
            f"reports {sorted(reported)}): choose a reward for this env, or give those "
            "components weight 0"
        )


class MissingComponent(UserInputError, KeyError):
    """A reward reads a component the env did not report: the reward given does not fit the env.

    Both types: the command prints it as a user error (one line, exit 2), and code that catches
    the ``KeyError`` this always was still does. Its text is the message, not ``KeyError``'s
    quoted repr.

    Example:
        >>> RewardConfig(weights={"acuracy": 1.0}).combine({"accuracy": 1.0})
        Traceback (most recent call last):
        ...
        agentenv.rewards.config.MissingComponent: reward weight on 'acuracy' but the env reported only ['accuracy']; did you mean 'accuracy'?
    """

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


PRESETS: dict[str, RewardConfig] = {
    "strict": RewardConfig(name="strict"),
    "lenient": RewardConfig(name="lenient", over_limit="allow"),
    "efficient": RewardConfig(name="efficient", tool_call_cost=0.05, turn_cost=0.02, cost_cap=0.5),
}
"""The generic presets; a family's own ones live in its record (``Family.reward_presets``)."""


def preset_names() -> tuple[str, ...]:
    """Every preset a name may pick: the generic ones, then those the registered families declare."""
    from agentenv.families import reward_preset_names

    return (*PRESETS, *reward_preset_names())


def resolve_reward(spec: str | Mapping[str, Any] | RewardConfig | Path | None) -> RewardConfig:
    """Accept a preset name, a dict, a ``RewardConfig``, or a JSON/YAML file path.

    A dict may start from a preset (``{"preset": "efficient", "latency_cost":
    0.001}``); its name becomes ``"efficient+custom"`` unless it sets one, so
    logs never call a changed preset by the preset's name. User input fails
    early with the field at fault and the fix.
    """
    if spec is None:
        return PRESETS["strict"]
    if isinstance(spec, RewardConfig):
        return spec
    if isinstance(spec, Path) or (
        isinstance(spec, str) and spec.endswith((".json", ".yaml", ".yml"))
    ):
        path = Path(spec)
        data = read_reward_file(path)
        try:
            return resolve_reward(data)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{path}: {exc}") from None
    if isinstance(spec, str):
        if spec in PRESETS:
            return PRESETS[spec]
        from agentenv.families import reward_preset

        declared = reward_preset(spec)
        if declared is not None:
            try:
                return RewardConfig(**declared)
            except ValidationError as exc:
                raise ValueError(
                    f"reward preset {spec!r}, as its family's record declares it "
                    f"(Family.reward_presets): {explain(exc, RewardConfig.model_fields)}"
                ) from None
        names = preset_names()
        hint = closest(spec, names)
        raise ValueError(
            f"unknown reward preset {spec!r}; choose one of {sorted(names)}"
            + (f" (did you mean {hint!r}?)" if hint else "")
            + ", pass a dict, or a .json/.yaml file path"
        )
    if isinstance(spec, Mapping):
        data = dict(spec)
        base = data.pop("preset", None)
        if base is not None:
            if not isinstance(base, str):
                raise ValueError(f"field 'preset': must be a preset name, got {base!r}")
            if base.endswith((".json", ".yaml", ".yml")):  # a file naming itself recursed forever
                raise ValueError(
                    f"field 'preset': names a preset ({', '.join(sorted(preset_names()))}), not a "
                    f"file ({base!r}); copy that file's fields into this one"
                )
            preset = resolve_reward(base)
            data = (
                {**preset.model_dump(), "name": f"{preset.name}+custom", **data}
                if data
                else preset.model_dump()
            )
        try:
            return RewardConfig(**data)
        except ValidationError as exc:
            raise ValueError(
                f"invalid reward config: {explain(exc, RewardConfig.model_fields)}"
            ) from None
    raise TypeError(
        f"reward must be a preset name, dict, RewardConfig or file path, not {type(spec).__name__}"
    )
