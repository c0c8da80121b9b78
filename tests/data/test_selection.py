"""Holdout-loss data selection: which tokens count, what a score means, and how rows are kept."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from agentenv.data.selection import (  # noqa: E402 - after the skips
    SelectionConfig,
    _prepare_holdout,
    gradient_alignment_scores,
    holdout_losses,
    in_context_scores,
    select_random,
    select_top,
    write_selection,
)

CHATML = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{{ message['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
WORDS = (
    "search title director year cast movie film answer the of which who what is was in a "
    "tool call result find list show me please thanks psycho liam debs query get id release"
).split()
SYSTEM = "You are a helpful agent. Use the tools."


@pytest.fixture(scope="module")
def tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    rng = np.random.default_rng(0)
    corpus = [" ".join(rng.choice(WORDS, size=8)) for _ in range(300)]
    corpus += ["user", "assistant", "system", "tool", SYSTEM]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400, special_tokens=SPECIAL, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(corpus, trainer)
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<|endoftext|>", pad_token="<|endoftext|>"
    )
    fast.chat_template = CHATML
    return fast


@pytest.fixture(scope="module")
def model(tokenizer):
    config = transformers.Qwen3Config(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
        max_position_embeddings=1024,
        pad_token_id=tokenizer.pad_token_id,
    )
    with torch.random.fork_rng():
        torch.manual_seed(0)
        built = transformers.Qwen3ForCausalLM(config)
    return built.eval()


def row(user: str, answer: str, *, system: str = SYSTEM, extra: list | None = None) -> dict:
    messages = [
        {"role": "system", "content": system},
        {"role": "user", "content": user},
        {"role": "assistant", "content": "search " + answer},
        {"role": "tool", "content": "result " + answer},
        {"role": "assistant", "content": answer},
    ]
    return {"messages": messages + (extra or []), "tools": []}


HOLDOUT = [row(f"who is the director of movie {i}", f"the director is liam {i}") for i in range(6)]
CANDIDATES = [
    row("which film was in release year", "psycho"),
    row("show me the cast list please", "debs and liam"),
    HOLDOUT[0],
]


def direct_loss(model, tokenizer, context_text: str, holdout: dict) -> float:
    """Independent reference: assistant spans found by string search in the rendered text."""
    text = tokenizer.apply_chat_template(holdout["messages"], tokenize=False)
    spans, cursor = [], 0
    for message in holdout["messages"]:
        if message["role"] == "assistant":
            start = text.index("<|im_start|>assistant\n", cursor) + len("<|im_start|>assistant\n")
            end = text.index("<|im_end|>\n", start) + len("<|im_end|>\n")
            spans.append((start, end))
            cursor = end
    context = tokenizer(context_text, add_special_tokens=False)["input_ids"]
    enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    ids = context + enc["input_ids"]
    mask = [0] * len(context) + [
        int(any(a <= s < b for a, b in spans)) for s, _ in enc["offset_mapping"]
    ]
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([ids])).logits[0, :-1]
    losses = torch.nn.functional.cross_entropy(logits, torch.tensor(ids[1:]), reduction="none")
    counted = torch.tensor(mask[1:], dtype=torch.float32)
    return float((losses * counted).sum() / counted.sum())


# --- which tokens count ------------------------------------------------------


def test_only_assistant_turns_and_their_end_markers_count(tokenizer) -> None:
    h = _prepare_holdout(tokenizer, HOLDOUT[1], 1024, 0)
    counted = tokenizer.decode([t for t, m in zip(h.ids, h.mask, strict=True) if m])
    assert counted == "search the director is liam 1<|im_end|>\nthe director is liam 1<|im_end|>\n"


def test_changing_user_or_system_text_keeps_the_counted_tokens(tokenizer, model) -> None:
    base = row("who is the director", "liam")
    other = row("please show me the list of cast and year", "liam", system="Another system prompt.")

    def counted(r):
        h = _prepare_holdout(tokenizer, r, 1024, 0)
        return [t for t, m in zip(h.ids, h.mask, strict=True) if m]

    assert counted(base) == counted(other)


def test_loss_ignores_later_non_assistant_turns_but_not_assistant_text(tokenizer, model) -> None:
    base = row("who is the director", "liam")
    trailing_user = row(
        "who is the director", "liam", extra=[{"role": "user", "content": "thanks"}]
    )
    other_answer = row("who is the director", "psycho release")
    losses = holdout_losses(
        model, tokenizer, [base, trailing_user, other_answer], max_length=256, batch_size=3
    )
    assert losses[0] == pytest.approx(
        losses[1], abs=1e-5
    )  # causal model: a later user turn cannot matter
    assert abs(losses[0] - losses[2]) > 1e-3


def test_losses_match_an_independent_computation(tokenizer, model) -> None:
    losses = holdout_losses(model, tokenizer, HOLDOUT[:3], max_length=512, batch_size=2)
    for got, h in zip(losses, HOLDOUT[:3], strict=True):
        assert got == pytest.approx(direct_loss(model, tokenizer, "", h), abs=1e-5)


def test_padding_does_not_change_losses(tokenizer, model) -> None:
    rows = [
        HOLDOUT[0],
        row("a much longer user question about the cast list of a film", "x"),
        HOLDOUT[2],
    ]
    one = holdout_losses(model, tokenizer, rows, max_length=512, batch_size=1)
    batched = holdout_losses(model, tokenizer, rows, max_length=512, batch_size=3)
    np.testing.assert_allclose(one, batched, atol=1e-5)


def test_row_without_assistant_tokens_is_refused(tokenizer, model) -> None:
    no_answer = {"messages": [{"role": "user", "content": "hi"}], "tools": []}
    with pytest.raises(ValueError, match="holdout row 0 has no assistant tokens"):
        holdout_losses(model, tokenizer, [no_answer], max_length=64, batch_size=1)


# --- context, truncation and scores ------------------------------------------


def test_context_drops_a_shared_system_prompt_and_is_cut_from_the_left(tokenizer, model) -> None:
    context, h = CANDIDATES[0], HOLDOUT[1]
    # Same system prompt: the candidate is rendered without it.
    context_text = tokenizer.apply_chat_template(context["messages"][1:], tokenize=False)
    full = holdout_losses(
        model, tokenizer, [h], context_rows=[context], max_length=1024, batch_size=1
    )
    assert full[0] == pytest.approx(direct_loss(model, tokenizer, context_text, h), abs=1e-5)

    holdout_len = len(_prepare_holdout(tokenizer, h, 1024, 0).ids)
    context_ids = tokenizer(context_text, add_special_tokens=False)["input_ids"]
    cut = holdout_losses(
        model, tokenizer, [h], context_rows=[context], max_length=holdout_len + 5, batch_size=1
    )
    assert cut[0] == pytest.approx(
        direct_loss(model, tokenizer, tokenizer.decode(context_ids[-5:]), h), abs=1e-5
    )
    no_room = holdout_losses(
        model, tokenizer, [h], context_rows=[context], max_length=holdout_len, batch_size=1
    )
    assert no_room[0] == pytest.approx(direct_loss(model, tokenizer, "", h), abs=1e-6)


def test_context_with_a_different_system_prompt_is_rendered_whole(tokenizer, model) -> None:
    context = row("show me the cast", "liam", system="Another system prompt.")
    context_text = tokenizer.apply_chat_template(context["messages"], tokenize=False)
    got = holdout_losses(
        model, tokenizer, [HOLDOUT[2]], context_rows=[context], max_length=1024, batch_size=1
    )
    assert got[0] == pytest.approx(
        direct_loss(model, tokenizer, context_text, HOLDOUT[2]), abs=1e-5
    )


def test_score_is_baseline_minus_in_context_loss_over_the_drawn_holdout(tokenizer, model) -> None:
    config = SelectionConfig(holdout_per_example=3, max_length=512, batch_size=4, seed=1)
    reports: list[tuple[int, int]] = []
    scores = in_context_scores(
        model, tokenizer, CANDIDATES, HOLDOUT, config, progress=lambda d, t: reports.append((d, t))
    )
    drawn = [
        HOLDOUT[i] for i in np.sort(np.random.default_rng(1).choice(len(HOLDOUT), 3, replace=False))
    ]
    baseline = holdout_losses(model, tokenizer, drawn, max_length=512, batch_size=4)
    for score, candidate in zip(scores, CANDIDATES, strict=True):
        with_context = holdout_losses(
            model, tokenizer, drawn, context_rows=[candidate] * 3, max_length=512, batch_size=4
        )
        assert score == pytest.approx(float(np.mean(baseline - with_context)), abs=1e-5)
    assert reports[-1] == (3 + 3 * 3, 3 + 3 * 3)
    assert [d for d, _ in reports] == sorted(d for d, _ in reports)


def test_scores_are_deterministic_for_a_seed(tokenizer, model) -> None:
    config = SelectionConfig(holdout_per_example=2, max_length=256, batch_size=3, seed=7)
    first = in_context_scores(model, tokenizer, CANDIDATES, HOLDOUT, config)
    again = in_context_scores(model, tokenizer, CANDIDATES, HOLDOUT, config)
    assert first.shape == (3,) and np.all(np.isfinite(first))
    np.testing.assert_array_equal(first, again)


def test_a_copy_of_the_holdout_helps_more_than_unrelated_text_once_the_model_can_copy(
    tokenizer,
) -> None:
    """A model trained briefly to repeat its context scores the holdout's own copy highest."""
    config = transformers.Qwen3Config(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
        max_position_embeddings=256,
    )
    with torch.random.fork_rng():
        torch.manual_seed(0)
        copier = transformers.Qwen3ForCausalLM(config)
    generator = torch.Generator().manual_seed(0)
    optimizer = torch.optim.Adam(copier.parameters(), lr=3e-3)
    copier.train()
    for _ in range(150):  # random tokens twice: only the second half is predictable, by copying
        half = torch.randint(3, len(tokenizer), (16, 12), generator=generator)
        batch = torch.cat([half, half], dim=1)
        logits = copier(input_ids=batch).logits[:, 12:-1]
        loss = torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), batch[:, 13:].reshape(-1)
        )
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    holdout = [row("who", "liam psycho debs year cast 1")]
    candidates = [row("what", "search list tool query thanks me"), holdout[0]]
    scores = in_context_scores(
        copier, tokenizer, candidates, holdout, SelectionConfig(max_length=256)
    )
    assert scores[1] > scores[0]


def test_gradient_alignment_is_one_for_the_holdout_itself(tokenizer, model) -> None:
    config = SelectionConfig(holdout_per_example=1, max_length=256)
    scores = gradient_alignment_scores(
        model, tokenizer, [HOLDOUT[3], CANDIDATES[0]], [HOLDOUT[3]], config
    )
    assert scores[0] == pytest.approx(1.0, abs=1e-5)
    assert -1.0 <= scores[1] < 0.999
    assert all(p.grad is None for p in model.parameters())


# --- keeping rows ------------------------------------------------------------


def test_select_top_keeps_the_fraction_with_the_highest_scores_in_original_order() -> None:
    rows = [f"r{i}" for i in range(10)]
    scores = [0.5, 0.1, 0.9, 0.9, -1.0, np.nan, 0.3, 0.8, 0.0, 0.2]
    assert select_top(rows, scores, 0.3) == ["r2", "r3", "r7"]
    assert select_top(rows, scores, 0.01) == ["r2"]  # at least one row, ties to the earlier one
    assert len(select_top(rows, scores, 1.0)) == 10
    with pytest.raises(ValueError, match="one per row"):
        select_top(rows, scores[:3], 0.3)


def test_select_random_has_the_same_count_and_is_seeded() -> None:
    rows = list(range(50))
    picked = select_random(rows, 0.3, seed=3)
    assert len(picked) == len(select_top(rows, np.zeros(50), 0.3)) == 15
    assert picked == select_random(rows, 0.3, seed=3) == sorted(picked)
    assert picked != select_random(rows, 0.3, seed=4)


def test_write_selection_round_trips_jsonl(tmp_path) -> None:
    path = write_selection(CANDIDATES[:2], tmp_path / "out" / "chat.jsonl")
    assert [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
    ] == CANDIDATES[:2]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("fraction", 0),
        ("fraction", 1.5),
        ("holdout_per_example", 0),
        ("max_length", -1),
        ("batch_size", 2.5),
        ("seed", -3),
    ],
)
def test_bad_config_values_name_the_field(field, value) -> None:
    with pytest.raises(ValueError, match=field):
        SelectionConfig(**{field: value})
    if field == "fraction":
        with pytest.raises(ValueError, match="fraction"):
            select_random([1, 2], value, seed=0)
